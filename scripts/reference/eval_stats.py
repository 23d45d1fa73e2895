#!/usr/bin/env python3
"""Reference values for Loupe's eval statistics, from scipy and statsmodels, on a few fixed
datasets. Writes Tests/LoupeEvalsTests/Fixtures/reference-stats.json, which the Swift tests
(StatisticsReferenceTests) compare against.

  scripts/python-peers   # .venv-peers has numpy, scipy and statsmodels
  .venv-peers/bin/python scripts/reference/eval_stats.py

Tango's score interval for paired pass rates has no statsmodels function: it is written here from
the published formula (Tango 1998) with scipy's root finder, and checked on the way against the
figures that Fagerland, Lydersen and Laake's R package contingencytables prints for its worked
example, and against statsmodels' asymptotic McNemar test, which it inverts at a difference of 0.
"""
import json
import math
import os

import numpy as np
import scipy
import statsmodels
import statsmodels.api as sm
from scipy import optimize, stats
from scipy.special import comb
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestPower
from statsmodels.stats.proportion import proportion_confint

rng = np.random.default_rng(20261122)
out = {"scipy": scipy.__version__, "statsmodels": statsmodels.__version__}

# Distributions.
out["t_quantiles"] = [
    {"p": p, "df": df, "t": float(stats.t.ppf(p, df))}
    for p in (0.6, 0.8, 0.975, 0.995) for df in (1, 2, 5, 29, 200)
]
out["t_cdf"] = [
    {"t": t, "df": df, "p": float(stats.t.cdf(t, df))} for t in (-3.0, -0.5, 0.0, 1.2, 2.5) for df in (1, 3, 10, 57)
]
out["normal_quantiles"] = [{"p": p, "z": float(stats.norm.ppf(p))} for p in (1e-6, 0.01, 0.3, 0.5, 0.975, 0.999999)]

# Wilson intervals for pass rates, including 0/n and n/n.
out["wilson"] = []
for k, n in ((0, 10), (10, 10), (7, 20), (1, 3), (412, 500), (50, 100)):
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    out["wilson"].append({"successes": k, "n": n, "lower": float(lo), "upper": float(hi)})

# Student-t intervals on means.
datasets = {
    "small": [0.2, 0.9, 0.4, 0.7],
    "scores": [float(x) for x in rng.beta(2, 3, size=60)],
    "skewed": [float(x) for x in rng.exponential(1.0, size=40)],
}
out["t_intervals"] = []
for name, values in datasets.items():
    x = np.array(values)
    lo, hi = stats.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=stats.sem(x))
    out["t_intervals"].append({"name": name, "values": values, "mean": float(x.mean()), "lower": float(lo), "upper": float(hi)})

# Percentile bootstrap of the mean (Monte Carlo: compared within a tolerance, not exactly).
x = np.array(datasets["skewed"])
boot = stats.bootstrap((x,), np.mean, n_resamples=20000, method="percentile", random_state=0, confidence_level=0.95)
out["bootstrap_mean"] = {
    "values": datasets["skewed"],
    "lower": float(boot.confidence_interval.low),
    "upper": float(boot.confidence_interval.high),
}

# Epochs: average within item, then t across items.
epochs = [[float(v) for v in rng.integers(0, 2, size=5)] for _ in range(30)]
means = np.array([np.mean(e) for e in epochs])
lo, hi = stats.t.interval(0.95, len(means) - 1, loc=means.mean(), scale=stats.sem(means))
out["clustered"] = {"epochs": epochs, "mean": float(means.mean()), "lower": float(lo), "upper": float(hi)}

# pass@k and pass^k from exact binomial coefficients.
out["pass_at_k"] = []
for n, c in ((5, 0), (5, 2), (10, 3), (10, 10), (20, 1)):
    for k in sorted({1, 2, min(5, n), n}):
        out["pass_at_k"].append({
            "n": n, "c": c, "k": k,
            "pass_at": float(1 - comb(n - c, k, exact=True) / comb(n, k, exact=True)),
            "pass_hat": float(comb(c, k, exact=True) / comb(n, k, exact=True)),
        })

# Calibration: ECE over 10 equal-width bins and the Brier score, straight from the definitions.
confidence = rng.uniform(0, 1, size=200)
confidence[:3] = [0.0, 1.0, 0.5]
correct = (rng.uniform(0, 1, size=200) < confidence ** 1.5).astype(float)
bins = np.minimum((confidence * 10).astype(int), 9)
ece = sum((bins == b).sum() / len(bins) * abs(correct[bins == b].mean() - confidence[bins == b].mean())
          for b in range(10) if (bins == b).any())
out["calibration"] = {
    "confidences": confidence.tolist(), "outcomes": correct.tolist(),
    "ece": float(ece), "brier": float(np.mean((confidence - correct) ** 2)),
}

# Paired comparisons: continuous (t-test on differences) and binary (McNemar exact).
a = rng.beta(2, 3, size=50)
b = np.clip(a + rng.normal(0.04, 0.1, size=50), 0, 1)
d = b - a
lo, hi = stats.t.interval(0.95, len(d) - 1, loc=d.mean(), scale=stats.sem(d))
mde_exact = TTestPower().solve_power(nobs=len(d), alpha=0.05, power=0.8, alternative="two-sided") * d.std(ddof=1)
out["paired_continuous"] = {
    "a": a.tolist(), "b": b.tolist(), "mean_difference": float(d.mean()), "lower": float(lo), "upper": float(hi),
    "p_value": float(stats.ttest_rel(b, a).pvalue),
    "mde_noncentral_t": float(mde_exact),
}
pa = (rng.uniform(size=80) < 0.6).astype(float)
pb = pa.copy()
flip = rng.uniform(size=80)
pb[(pa == 1) & (flip < 0.1)] = 0
pb[(pa == 0) & (flip < 0.45)] = 1
table = [[int(((pa == 1) & (pb == 1)).sum()), int(((pa == 1) & (pb == 0)).sum())],
         [int(((pa == 0) & (pb == 1)).sum()), int(((pa == 0) & (pb == 0)).sum())]]
out["paired_binary"] = {
    "a": pa.tolist(), "b": pb.tolist(), "table": table,
    "mcnemar_p": float(mcnemar(table, exact=True).pvalue),
    "mcnemar_asymptotic_p": float(mcnemar(table, exact=False, correction=False).pvalue),
}

# Benjamini-Hochberg.
p_values = [0.001, 0.008, 0.039, 0.041, 0.042, 0.06, 0.074, 0.205, 0.212, 0.216, 0.222, 0.251, 0.269, 0.275, 0.34]
out["benjamini_hochberg"] = {
    "p": p_values, "adjusted": [float(v) for v in multipletests(p_values, method="fdr_bh")[1]],
}

# Wilson at a fractional count (a tie as half a win; a design-effect-adjusted n).
out["wilson_fractional"] = []
for count, nobs in ((4.5, 9.0), (10.0, 10.0), (0.0, 7.5), (33.3, 61.7)):
    lo, hi = proportion_confint(count, nobs, alpha=0.05, method="wilson")
    out["wilson_fractional"].append({"count": count, "nobs": nobs, "lower": float(lo), "upper": float(hi)})

# A pass rate over items with several epochs: Wilson over the effective number of trials, the
# rows over the design effect, n_eff = p(1 - p) / Var(p), Var(p) from the item means (Korn and
# Graubard 1998), held between the items and the rows; the rows where p is 0 or 1.
out["clustered_proportion"] = []
for items, epochs, spread in ((30, 4, 0.8), (12, 3, 0.3), (5, 2, 0.0), (40, 5, 1.0)):
    rates = np.clip(0.6 + (rng.uniform(size=items) - 0.5) * spread, 0, 1)
    data = [[float(v) for v in (rng.uniform(size=epochs) < r)] for r in rates]
    if spread == 0.0:
        data = [[1.0] * epochs for _ in range(items)]
    m = np.array([np.mean(e) for e in data])
    p = m.mean()
    rows = items * epochs
    var = m.var(ddof=1) / items
    n_eff = float(rows) if (var == 0 or p in (0.0, 1.0)) else float(min(rows, max(items, p * (1 - p) / var)))
    lo, hi = proportion_confint(p * n_eff, n_eff, alpha=0.05, method="wilson")
    out["clustered_proportion"].append(
        {"epochs": data, "estimate": float(p), "n_eff": n_eff, "lower": float(lo), "upper": float(hi)})

# Paired pass rates: Tango's score interval for the difference p(B passes) - p(A passes), from
# "fixed" items (A failed, B passed) and "regressed" ones (A passed, B failed) among n.
def tango_statistic(fixed, regressed, n, delta):
    a = 2 * n
    b = -fixed - regressed + (2 * n - fixed + regressed) * delta
    c = -regressed * delta * (1 - delta)
    q = (-b + math.sqrt(max(0.0, b * b - 4 * a * c))) / (2 * a)
    variance = n * (2 * q + delta * (1 - delta))
    return (fixed - regressed - n * delta) / math.sqrt(variance)


def tango_interval(fixed, regressed, n, alpha=0.05):
    z = stats.norm.ppf(1 - alpha / 2)
    estimate = (fixed - regressed) / n
    eps = 1e-12
    lower = -1.0 if estimate == -1 else optimize.brentq(
        lambda d: tango_statistic(fixed, regressed, n, d) - z, -1 + eps, estimate - eps, xtol=1e-14, rtol=1e-15)
    upper = 1.0 if estimate == 1 else optimize.brentq(
        lambda d: tango_statistic(fixed, regressed, n, d) + z, estimate + eps, 1 - eps, xtol=1e-14, rtol=1e-15)
    return estimate, lower, upper


# contingencytables (Fagerland, Lydersen and Laake), chapter 8's example, Cavo et al. 2012: the
# table [[59, 6], [16, 80]] prints "estimate = -0.0621 (95% CI -0.1240 to -0.0054)" for Tango and
# "The McNemar asymptotic test: P = 0.033006" beside "exact conditional test: P = 0.052479".
cavo = tango_interval(6, 16, 161)
assert [round(v, 4) for v in cavo] == [-0.0621, -0.1240, -0.0054], cavo
cavo_table = [[59, 6], [16, 80]]
assert round(float(mcnemar(cavo_table, exact=False, correction=False).pvalue), 6) == 0.033006
assert round(float(mcnemar(cavo_table, exact=True).pvalue), 6) == 0.052479

out["paired_proportions"] = []
for fixed, regressed, n in ((6, 16, 161), (5, 0, 20), (2, 1, 6), (0, 0, 10), (9, 2, 40), (12, 0, 12),
                            (0, 7, 7), (1, 0, 1), (30, 18, 200), (3, 3, 9)):
    estimate, lower, upper = tango_interval(fixed, regressed, n)
    table = [[n - fixed - regressed, regressed], [fixed, 0]]
    asymptotic = 1.0 if fixed + regressed == 0 else float(mcnemar(table, exact=False, correction=False).pvalue)
    out["paired_proportions"].append({
        "fixed": fixed, "regressed": regressed, "n": n, "estimate": estimate, "lower": lower, "upper": upper,
        "mcnemar_asymptotic_p": asymptotic, "mcnemar_exact_p": float(mcnemar(table, exact=True).pvalue),
    })

# A pass rate over items with several epochs, its variance from statsmodels' cluster-robust
# (sandwich) estimator rather than from the item means by hand: weighted least squares on a
# constant, each answer weighted 1 / (its item's epochs) so every item counts once, standard
# errors clustered by item. Then Korn and Graubard's effective n = p(1 - p) / Var(p), held between
# the items and the answers, and statsmodels' Wilson interval over it.
out["clustered_proportion_sandwich"] = []
sandwich_rng = np.random.default_rng(62)
for items, epochs, rate in ((25, [3], 0.7), (12, [1, 2, 5], 0.5), (40, [2, 4], 0.85), (8, [5], 0.3),
                            (30, [1], 0.6)):
    data = []
    for item in range(items):
        difficulty = min(1.0, max(0.0, rate + (sandwich_rng.uniform() - 0.5) * 0.8))
        count = epochs[item % len(epochs)]
        data.append([float(v) for v in (sandwich_rng.uniform(size=count) < difficulty)])
    y = np.concatenate([np.array(e) for e in data])
    groups = np.concatenate([np.full(len(e), i) for i, e in enumerate(data)])
    weights = np.concatenate([np.full(len(e), 1 / len(e)) for e in data])
    fit = sm.WLS(y, np.ones_like(y), weights=weights).fit(cov_type="cluster", cov_kwds={"groups": groups})
    p = float(fit.params[0])
    variance = float(fit.bse[0]) ** 2
    rows = len(y)
    n_eff = float(rows) if (variance == 0 or p in (0.0, 1.0)) else float(min(rows, max(items, p * (1 - p) / variance)))
    lo, hi = proportion_confint(p * n_eff, n_eff, alpha=0.05, method="wilson")
    out["clustered_proportion_sandwich"].append({
        "epochs": data, "estimate": p, "cluster_variance": variance, "n_eff": n_eff,
        "lower": float(lo), "upper": float(hi),
    })

path = os.path.join(os.path.dirname(__file__), "..", "..", "Tests", "LoupeEvalsTests", "Fixtures", "reference-stats.json")
with open(path, "w") as f:
    json.dump(out, f, indent=1)
print("wrote", os.path.normpath(path))
