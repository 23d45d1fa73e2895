"""Fake-quantisation study of dynamic int8 for all-MiniLM-L6-v2 (mirrors Loupe's BertEncoder.quantized()).

Own fp32 BERT forward (checked against sentence-transformers), every Linear of the 6 blocks routed through
`qlinear`, which simulates (quantise-dequantise in fp32) the int8 scheme described by a config dict.
Q, K, V are stacked into one [1152, 384] Linear as Loupe does (matters for smoothing's weight column maxima
and nothing else).

Run from the checkout: .venv-bench/bin/python scripts/reference/int8_quant_sim.py [filter] (FULL=1: every
passage and sentence). Written to choose the next int8 scheme (issue 23: cosine to fp32 >= 0.999); the
findings are in that issue's notes. Needs torch and sentence-transformers (.venv-bench) and MiniLM
(scripts/fetch-minilm).
"""
import math, os, sys, time, json
import numpy as np
import torch
torch.set_num_threads(1)
from sentence_transformers import SentenceTransformer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL = os.path.expanduser("~/.cache/loupe/models/all-MiniLM-L6-v2")
st = SentenceTransformer(MODEL, device="cpu")
tok = st.tokenizer
sd = {k: v.detach().float().clone() for k, v in st[0].auto_model.state_dict().items()}
L, H, NH, DH = 6, 384, 12, 32
KINDS = ["qkv", "ao", "up", "down"]
W = {}
for l in range(L):
    p = f"encoder.layer.{l}."
    W[(l, "qkv")] = (torch.cat([sd[p + f"attention.self.{n}.weight"] for n in ("query", "key", "value")]),
                     torch.cat([sd[p + f"attention.self.{n}.bias"] for n in ("query", "key", "value")]))
    W[(l, "ao")] = (sd[p + "attention.output.dense.weight"], sd[p + "attention.output.dense.bias"])
    W[(l, "up")] = (sd[p + "intermediate.dense.weight"], sd[p + "intermediate.dense.bias"])
    W[(l, "down")] = (sd[p + "output.dense.weight"], sd[p + "output.dense.bias"])


def ln(x, g, b):
    return torch.nn.functional.layer_norm(x, (H,), g, b, eps=1e-12)


def forward(ids, mask, lin, observe=None):
    """ids, mask: [B, T]. lin(layer, kind, x2d) -> y2d. observe(layer, kind, x2d, mask2d)."""
    B, T = ids.shape
    x = sd["embeddings.word_embeddings.weight"][ids] + sd["embeddings.position_embeddings.weight"][:T][None] \
        + sd["embeddings.token_type_embeddings.weight"][0]
    x = ln(x, sd["embeddings.LayerNorm.weight"], sd["embeddings.LayerNorm.bias"]).reshape(B * T, H)
    m2 = mask.reshape(B * T).bool()
    addmask = (1.0 - mask[:, None, None, :].float()) * -1e9
    for l in range(L):
        p = f"encoder.layer.{l}."

        def run(kind, inp):
            if observe: observe(l, kind, inp, m2)
            return lin(l, kind, inp)
        qkv = run("qkv", x).reshape(B, T, 3, NH, DH).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(DH) + addmask, -1)
        ctx = (a @ v).permute(0, 2, 1, 3).reshape(B * T, H)
        x = ln(run("ao", ctx) + x, sd[p + "attention.output.LayerNorm.weight"], sd[p + "attention.output.LayerNorm.bias"])
        h = torch.nn.functional.gelu(run("up", x))
        x = ln(run("down", h) + x, sd[p + "output.LayerNorm.weight"], sd[p + "output.LayerNorm.bias"])
    x = x.reshape(B, T, H)
    mf = mask[..., None].float()
    e = (x * mf).sum(1) / mf.sum(1).clamp(min=1)
    return torch.nn.functional.normalize(e, dim=-1)


def fp32_lin(l, kind, x):
    w, b = W[(l, kind)]
    return x @ w.T + b


def encode_texts(texts):
    enc = tok(texts, padding=True, truncation=True, max_length=256, return_tensors="pt")
    return enc["input_ids"], enc["attention_mask"]


def lines(path, n=None):
    with open(path) as f:
        out = [s.rstrip("\n") for s in f if s.strip()]
    return out[:n] if n else out


SETS = {
    "varied": lines(f"{ROOT}/sample-data/bench/varied-sentences.txt"),
    "passages32": lines(f"{ROOT}/sample-data/bench/passages-128.txt", 32),
    "sentences128": lines(f"{ROOT}/sample-data/bench/sentences-256.txt", 128),
}
if os.environ.get("FULL"):  # every line of both benchmark files instead of the first 32 / 128
    SETS = {"varied": SETS["varied"],
            "passages128": lines(f"{ROOT}/sample-data/bench/passages-128.txt"),
            "sentences256": lines(f"{ROOT}/sample-data/bench/sentences-256.txt")}
BATCHES = {}
for name, texts in SETS.items():
    # sort by length into batches of 16 to limit padding
    order = sorted(range(len(texts)), key=lambda i: len(tok(texts[i])["input_ids"]))
    bs = []
    for s in range(0, len(order), 16):
        idx = order[s:s + 16]
        bs.append((idx, *encode_texts([texts[i] for i in idx])))
    BATCHES[name] = bs


def embed(name, lin):
    out = torch.zeros(len(SETS[name]), H)
    with torch.no_grad():
        for idx, ids, mask in BATCHES[name]:
            out[idx] = forward(ids, mask, lin)
    return out


REF = {n: embed(n, fp32_lin) for n in SETS}
# sanity: against sentence-transformers
for n in SETS:
    e = st.encode(SETS[n], convert_to_tensor=True, normalize_embeddings=True, batch_size=16)
    d = (e - REF[n]).abs().max().item()
    assert d < 1e-4, (n, d)

# ---------------------------------------------------------------- calibration


class SplitMix64:
    def __init__(self, seed): self.s = seed
    def next(self):
        M = (1 << 64) - 1
        self.s = (self.s + 0x9E3779B97F4A7C15) & M
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
        return z ^ (z >> 31)


def calibrate(ids, mask):
    stats = {}

    def obs(l, kind, x, m2):
        xr = x[m2].abs()
        mx = xr.max(0).values
        key = (l, kind)
        stats[key] = torch.maximum(stats[key], mx) if key in stats else mx
    with torch.no_grad():
        forward(ids, mask, fp32_lin, observe=obs)
    return stats


g = SplitMix64(23)
rand_ids = torch.tensor([[101] + [1000 + g.next() % (30522 - 1000) for _ in range(62)] + [102] for _ in range(16)])
CAL = {"random": calibrate(rand_ids, torch.ones_like(rand_ids))}
# real text, held out from every test set: passages 65-80 and sentences 200-231
real = lines(f"{ROOT}/sample-data/bench/passages-128.txt")[64:80] + lines(f"{ROOT}/sample-data/bench/sentences-256.txt")[200:232]
CAL["real"] = {}
for s in range(0, len(real), 16):
    st_ = calibrate(*encode_texts(real[s:s + 16]))
    for k, v in st_.items():
        CAL["real"][k] = torch.maximum(CAL["real"][k], v) if k in CAL["real"] else v

# ---------------------------------------------------------------- fake quantisation


def round_half_up(x):
    return torch.floor(x + 0.5)


def fq_weight_rows(w, bits=8):
    qmax = 2 ** (bits - 1) - 1
    s = w.abs().amax(1, keepdim=True) / qmax
    s = torch.where(s > 0, s, torch.ones_like(s))
    return torch.clamp(torch.round(w / s), -qmax, qmax) * s


def fq_act(x, mode="sym", group=None, bits=8):
    """per-token (per-row) fake quant; group: scale per `group` input channels."""
    T, K = x.shape
    if group:
        x = x.reshape(T, K // group, group)
    if mode == "sym":
        qmax = 2 ** (bits - 1) - 1
        s = x.abs().amax(-1, keepdim=True) / qmax
        s = torch.where(s > 0, s, torch.ones_like(s))
        y = round_half_up(x / s).clamp(-qmax, qmax) * s
    elif mode == "asym":  # u8 with a zero point per row: q = round(x/s) + z in [0, 255]
        qmax = 2 ** bits - 1
        lo = x.amin(-1, keepdim=True).clamp(max=0)
        hi = x.amax(-1, keepdim=True).clamp(min=0)
        s = (hi - lo) / qmax
        s = torch.where(s > 0, s, torch.ones_like(s))
        z = round_half_up(-lo / s)
        y = (round_half_up(x / s) + z).clamp(0, qmax)
        y = (y - z) * s
    else:
        raise ValueError(mode)
    return y.reshape(T, K)


class Scheme:
    """cfg per kind: None (fp32) or dict(alpha=None|float, mode='sym'|'asym', group=None|int, outliers=0|int,
    abits=8, layers=None|set of block indices quantised (others fp32))."""

    def __init__(self, cfg, cal="random"):
        self.cfg, self.stats, self.cache = cfg, CAL[cal], {}

    def prepare(self, l, kind):
        c = self.cfg.get(kind)
        if c is None or (c.get("layers") is not None and l not in c["layers"]):
            return None
        w, b = W[(l, kind)]
        amax = self.stats[(l, kind)].clamp(min=1e-8)
        K = w.shape[1]
        if c.get("alpha") is not None:
            a = c["alpha"]
            wmax = w.abs().amax(0)
            s = torch.where((amax > 0) & (wmax > 0), amax.pow(a) / wmax.pow(1 - a), torch.ones_like(amax)).clamp(min=1e-5)
        else:
            s = torch.ones(K)
        ws = w * s
        n_out = c.get("outliers", 0)
        if n_out:
            sel = c.get("select", "act")  # which channels are kept in fp32
            score = (amax / s) if sel == "act" else (amax / s) * ws.abs().amax(0)
            out_idx = torch.topk(score, n_out).indices
            keep = torch.ones(K, dtype=torch.bool); keep[out_idx] = False
        else:
            out_idx, keep = torch.zeros(0, dtype=torch.long), torch.ones(K, dtype=torch.bool)
        wq = fq_weight_rows(ws[:, keep], c.get("wbits", 8))
        return dict(s=s, keep=keep, out_idx=out_idx, wq=wq, wo=ws[:, out_idx], b=b, c=c)

    def __call__(self, l, kind, x):
        key = (l, kind)
        if key not in self.cache:
            self.cache[key] = self.prepare(l, kind)
        p = self.cache[key]
        if p is None:
            return fp32_lin(l, kind, x)
        c = p["c"]
        xs = x / p["s"]
        xq = fq_act(xs[:, p["keep"]], c.get("mode", "sym"), c.get("group"), c.get("abits", 8))
        y = xq @ p["wq"].T + p["b"]
        if len(p["out_idx"]):
            y = y + xs[:, p["out_idx"]] @ p["wo"].T
        return y


def evaluate(cfg, cal="random"):
    sch = Scheme(cfg, cal)
    res = {}
    for n in SETS:
        cos = (embed(n, sch) * REF[n]).sum(-1)
        res[n] = (cos.min().item(), cos.mean().item(), int(cos.argmin()))
    return res


def Q(**kw):
    return dict(kw)


BASE = {"qkv": Q(alpha=0.5), "ao": Q(), "up": Q(alpha=0.5), "down": Q()}


def with_(base, **over):
    out = {k: (dict(v) if v is not None else None) for k, v in base.items()}
    for k, v in over.items():
        out[k] = v
    return out


def all4(**kw):
    return {k: Q(**kw) for k in KINDS}


def smooth2(**kw):  # baseline smoothing (qkv, up at 0.5) + kw on all four
    return {"qkv": Q(alpha=0.5, **kw), "ao": Q(**kw), "up": Q(alpha=0.5, **kw), "down": Q(**kw)}


EXPERIMENTS = []


def add(name, cfg, cost, cal="random"):
    EXPERIMENTS.append((name, cfg, cost, cal))


add("fp32 (sanity)", {k: None for k in KINDS}, "—")
add("BASELINE: Loupe now (sym per token; smooth α=.5 on qkv, up)", BASE, "reference")
add("no smoothing, sym per token", all4(), "-")
add("BASELINE calibrated on real text", BASE, "same as baseline", cal="real")
# 3: per layer alone
for k in KINDS:
    add(f"only {k} int8 (baseline's form), rest fp32", {kk: (BASE[kk] if kk == k else None) for kk in KINDS}, "diagnostic")
for k in KINDS:
    add(f"baseline with {k} fp32", with_(BASE, **{k: None}), f"{k} as fp32 GEMM")
for l in range(L):
    add(f"only block {l} int8 (baseline form)", {k: dict(BASE[k], layers={l}) for k in KINDS}, "diagnostic")
# 1: groups
for gsz in (32, 64, 128):
    add(f"baseline + group {gsz} act scales, all four", smooth2(group=gsz), f"K/{gsz} fp32 FMA per output (epilogue per group)")
    add(f"group {gsz}, no smoothing", all4(group=gsz), f"K/{gsz} fp32 FMA per output")
# 2: outliers
for n in (4, 8, 16):
    add(f"{n} outlier ch fp32 per layer, no smoothing", all4(outliers=n), f"fp32 GEMM m×{n}×n per layer")
    add(f"{n} outlier ch fp32 per layer + smoothing qkv/up", smooth2(outliers=n), f"fp32 GEMM m×{n}×n per layer")
# 4: alpha
for a in (0.3, 0.4, 0.6, 0.7, 0.8):
    add(f"smooth α={a} on qkv, up", {"qkv": Q(alpha=a), "ao": Q(), "up": Q(alpha=a), "down": Q()}, "same as baseline")
for a in (0.3, 0.5, 0.7):
    add(f"smooth α={a} on all four", all4(alpha=a), "same as baseline")
# 5: asymmetric
add("asym per token (zero point), smoothing qkv/up α=.5", smooth2(mode="asym"), "same GEMM; zero point × column sums (already paid for the +128)")
add("asym per token, no smoothing", all4(mode="asym"), "same")
add("baseline, asym only on down", with_(BASE, down=Q(mode="asym")), "same")
# The recommendation: R1 asymmetric per token everywhere, smoothing on qkv/up, FFN-down's two largest
# input channels in fp32 (min cosine 0.99920); R2 two fp32 channels in every layer (0.99940).
add("R1: asym all, smooth qkv/up, down 2 outlier ch fp32",
    {"qkv": Q(mode="asym", alpha=0.5), "ao": Q(mode="asym"), "up": Q(mode="asym", alpha=0.5),
     "down": Q(mode="asym", outliers=2)}, "fp32 m×2×384 in down")
add("R2: asym all, smooth qkv/up, 2 outlier ch fp32 in every layer", smooth2(outliers=2, mode="asym"),
    "fp32 m×2×n in every layer")

if __name__ == "__main__":
    flt = sys.argv[1] if len(sys.argv) > 1 else None
    extra = sys.argv[2] if len(sys.argv) > 2 else None
    if extra:
        exec(open(extra).read())
    rows = []
    for name, cfg, cost, cal in EXPERIMENTS:
        if flt and flt not in name:
            continue
        t = time.time()
        r = evaluate(cfg, cal)
        rows.append((name, r, cost))
        print(f"{name:70s} " + "  ".join(f"{n}: min {v[0]:.5f} mean {v[1]:.5f}" for n, v in r.items())
              + f"  [{time.time() - t:.1f}s]", flush=True)
    os.makedirs(os.path.join(ROOT, ".bench-data"), exist_ok=True)
    with open(os.path.join(ROOT, ".bench-data", "int8-quant-sim.json"), "w") as f:
        json.dump([(n, r, c) for n, r, c in rows], f, indent=1)
