"""Cranfield ×N for the BM25-at-scale comparison (issue 23): OUTDIR/corpus.jsonl holds N copies of
the 1,400 Cranfield documents, OUTDIR/queries.jsonl the 225 queries and OUTDIR/qrels.trec the qrels,
both copied unchanged (so only copy 0 is judged; the copies are distractors).

Copy 0 keeps the original ids and text. Copy c ≥ 1 is "{id}-{c}" with each whitespace-separated word
of the text dropped with probability 0.1 (title kept): identical copies would tie on every query and
make "identical top-100 lists" depend on tie-breaking rather than on scoring. Ties stay common all the
same (about a third of adjacent pairs in an exact top 100 tie exactly: many copies of a document share
its length and query-term counts), so retrieval-scale.sh compares lists up to ties.

The copies are shorter than their original, so they outrank it: nothing in the top 10 is a judged
document and the metrics that `loupe bench retrieval` prints mean nothing at this scale; the corpus
is for speed and list identity. The generator is seeded
per document, random.Random(c * 1_000_003 + doc index), so the output is the same bytes on every run
and any one document can be regenerated on its own.

Usage: bm25_scale_data.py OUTDIR [--copies 100] [--source sample-data/cranfield]
Skips the work when OUTDIR already holds files with the right line counts."""
import argparse
import json
import os
import random
import shutil

parser = argparse.ArgumentParser()
parser.add_argument("outdir")
parser.add_argument("--copies", type=int, default=100)
parser.add_argument("--source", default=os.path.join(os.path.dirname(__file__), "../../sample-data/cranfield"))
args = parser.parse_args()
src = args.source
os.makedirs(args.outdir, exist_ok=True)
corpus_out = os.path.join(args.outdir, "corpus.jsonl")
queries_out = os.path.join(args.outdir, "queries.jsonl")
qrels_out = os.path.join(args.outdir, "qrels.trec")


def line_count(path):
    if not os.path.exists(path):
        return -1
    with open(path, "rb") as f:
        return sum(1 for _ in f)


with open(os.path.join(src, "corpus.jsonl"), encoding="utf-8") as f:
    docs = [json.loads(line) for line in f if line.strip()]
want = len(docs) * args.copies
if (line_count(corpus_out) == want and line_count(queries_out) == line_count(os.path.join(src, "queries.jsonl"))
        and line_count(qrels_out) == line_count(os.path.join(src, "qrels.trec"))):
    print(f"{args.outdir}: {want} documents already there")
    raise SystemExit(0)

# Written beside the target and renamed, so an interrupted run never leaves a short corpus that the
# line-count check above would have to catch.
tmp = corpus_out + ".tmp"
with open(tmp, "w", encoding="utf-8") as out:
    for c in range(args.copies):
        for i, d in enumerate(docs):
            title, text = d.get("title") or "", d["text"]
            if c == 0:
                doc_id = d["id"]
            else:
                doc_id = f"{d['id']}-{c}"
                rng = random.Random(c * 1_000_003 + i)
                text = " ".join(w for w in text.split() if rng.random() >= 0.1)
            out.write(json.dumps({"id": doc_id, "title": title, "text": text}) + "\n")
os.replace(tmp, corpus_out)
shutil.copyfile(os.path.join(src, "queries.jsonl"), queries_out)
shutil.copyfile(os.path.join(src, "qrels.trec"), qrels_out)
print(f"{args.outdir}: wrote {want} documents ({args.copies} copies), {line_count(queries_out)} queries")
