"""The same TopK SAE training step as Loupe's, in PyTorch on the CPU, timed.

Usage: python sae_peers.py THREADS WIDTH K BATCH STEPS
Step: x - b_dec -> W_enc + b_enc -> top-k (then ReLU) -> W_dec + b_dec; loss = mean over rows of
the squared error summed over d; backward; the decoder gradient's radial part removed; Adam;
decoder rows renormalised. Inputs are Gaussian (the step's cost does not depend on them).
Prints JSON: tokens/s and ms/step.
"""
import json
import sys
import time

import torch

threads, width, k, batch, steps = (int(a) for a in sys.argv[1:6])
torch.set_num_threads(threads)
torch.manual_seed(0)
d = 384
W_dec = torch.nn.functional.normalize(torch.randn(width, d), dim=1)
W_enc = W_dec.t().clone().requires_grad_(True)
W_dec.requires_grad_(True)
b_enc = torch.zeros(width, requires_grad=True)
b_dec = torch.zeros(d, requires_grad=True)
opt = torch.optim.Adam([W_enc, b_enc, W_dec, b_dec], lr=4e-4)


def step(x):
    pre = (x - b_dec) @ W_enc + b_enc
    values, indices = pre.topk(k, dim=1)
    z = torch.zeros_like(pre).scatter(1, indices, torch.relu(values))
    x_hat = z @ W_dec + b_dec
    loss = (x_hat - x).pow(2).sum(dim=1).mean()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    with torch.no_grad():
        g = W_dec.grad
        g -= (g * W_dec).sum(dim=1, keepdim=True) * W_dec
    opt.step()
    with torch.no_grad():
        W_dec.div_(W_dec.norm(dim=1, keepdim=True))
    return loss


batches = [torch.randn(batch, d) for _ in range(steps + 3)]
for x in batches[:3]:
    step(x)
start = time.perf_counter()
for x in batches[3:]:
    step(x)
seconds = time.perf_counter() - start
print(json.dumps({
    "torch": torch.__version__, "threads": threads,
    "train_tokens_per_second": steps * batch / seconds, "train_seconds_per_step": seconds / steps,
}))
