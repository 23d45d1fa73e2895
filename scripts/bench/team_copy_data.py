"""Writes N copies of sample-data/traces/otlp-genai.jsonl's traces, each with new trace and span
ids, as one OTLP JSON-lines file: a workspace of real agent spans at a size worth timing a copy.

usage: python3 team_copy_data.py SAMPLE COPIES OUT
"""
import json
import sys


def main() -> None:
    sample, copies, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    lines = [json.loads(line) for line in open(sample, encoding="utf-8") if line.strip()]
    with open(out, "w", encoding="utf-8") as target:
        for copy in range(copies):
            for request in lines:
                text = json.dumps(request)
                for resource in request["resourceSpans"]:
                    for scope in resource["scopeSpans"]:
                        for span in scope["spans"]:
                            for key in ("traceId", "spanId", "parentSpanId"):
                                value = span.get(key)
                                if value:
                                    # Same length, new id: the copy number in the leading hex digits.
                                    prefix = f"{copy:08x}"
                                    text = text.replace(value, prefix + value[len(prefix):])
                target.write(text + "\n")


if __name__ == "__main__":
    main()
