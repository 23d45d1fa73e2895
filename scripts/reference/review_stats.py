#!/usr/bin/env python3
"""Reference values for the review loop's statistics (judge against human calibration, pairwise
verdicts, power planning), from the libraries the Swift code is meant to agree with, on fixed
datasets. Writes Tests/LoupeEvalsTests/Fixtures/reference-review-stats.json, which the Swift tests
(ReviewStatisticsReferenceTests) compare against.

  python3 -m venv .venv-reference
  .venv-reference/bin/pip install numpy scipy statsmodels scikit-learn krippendorff ppi_python choix
  .venv-reference/bin/python scripts/reference/review_stats.py

- Cohen's kappa: scikit-learn's cohen_kappa_score; its asymptotic standard error from statsmodels'
  cohens_kappa(table).std_kappa (rows: the reference rater, columns: the rated one).
- Krippendorff's alpha: the krippendorff package.
- Prediction-powered inference for a mean: ppi_python (ppi_mean_ci, classical_mean_ci).
- Bradley-Terry: choix's I-LSR maximum-likelihood estimate with every tie played as one win each
  way (decisive games twice), cross-checked against choix's own MM iteration.
- Power: statsmodels' TTestPower (noncentral t), scipy's nct for the distribution itself.
"""
import importlib.metadata
import json
import math
import os
import warnings

import choix
import krippendorff
import numpy as np
import ppi_py
import scipy
import sklearn
import statsmodels
from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate
from scipy import optimize, stats
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.power import TTestPower, ttest_power
from statsmodels.stats.proportion import proportion_confint

warnings.simplefilter("ignore")
rng = np.random.default_rng(20261201)
out = {"versions": {
    "numpy": np.__version__,
    "scipy": scipy.__version__,
    "statsmodels": statsmodels.__version__,
    "scikit-learn": sklearn.__version__,
    "krippendorff": importlib.metadata.version("krippendorff"),
    "ppi_python": importlib.metadata.version("ppi_python"),
    "choix": importlib.metadata.version("choix"),
}}
Z95 = float(stats.norm.ppf(0.975))


def number(x):
    """A float for JSON: NaN becomes null (JSON has no NaN)."""
    x = float(np.squeeze(x))
    return None if math.isnan(x) else x


# Cohen's kappa between a reference rater (human) and a rated one (judge).
def kappa_case(name, reference, rated):
    categories = sorted(set(reference) | set(rated))
    index = {c: i for i, c in enumerate(categories)}
    table = np.zeros((len(categories), len(categories)), dtype=int)
    for r, j in zip(reference, rated):
        table[index[r], index[j]] += 1
    n = len(reference)
    result = cohens_kappa(table)
    kappa = cohen_kappa_score(reference, rated)
    assert abs(kappa - result.kappa) < 1e-12 or (math.isnan(kappa) and math.isnan(result.kappa))
    rows, cols = table.sum(1) / n, table.sum(0) / n
    return {
        "name": name, "reference": reference, "rated": rated, "categories": categories,
        "confusion": table.tolist(), "n": n,
        "accuracy": float(np.trace(table) / n),
        "expected_agreement": float((rows * cols).sum()),
        "kappa": number(kappa),
        "std_kappa": number(result.std_kappa),
        "lower": number(result.kappa - Z95 * result.std_kappa),
        "upper": number(result.kappa + Z95 * result.std_kappa),
    }


truth = rng.uniform(size=80) < 0.55
judge = np.where(rng.uniform(size=80) < 0.85, truth, ~truth)
binary = (["pass" if t else "fail" for t in truth], ["pass" if j else "fail" for j in judge])
grades = ["bad", "good", "ok"]
human = rng.choice(grades, size=100, p=[0.25, 0.45, 0.30])
shifted = {"bad": "ok", "ok": "good", "good": "good"}
model = [h if u < 0.7 else (shifted[h] if u < 0.9 else grades[int(u * 1000) % 3]) for h, u in zip(human, rng.uniform(size=100))]
# A judge that answers "unsure", a label the human never used.
unsure_human = list(rng.choice(["no", "yes"], size=60))
unsure_judge = [("unsure" if u < 0.15 else (h if u < 0.85 else ("no" if h == "yes" else "yes")))
                for h, u in zip(unsure_human, rng.uniform(size=60))]
out["kappa"] = [
    kappa_case("binary", *binary),
    kappa_case("three-grades", [str(h) for h in human], [str(m) for m in model]),
    kappa_case("judge-only-category", [str(h) for h in unsure_human], unsure_judge),
    kappa_case("sklearn-example", ["negative", "positive", "negative", "neutral", "positive"],
               ["negative", "positive", "negative", "neutral", "negative"]),
]


# Krippendorff's alpha, raters x units, NaN for missing.
def alpha_case(name, data, levels):
    data = np.asarray(data, dtype=float)
    return {
        "name": name,
        "data": [[number(v) for v in row] for row in data],
        "alpha": {level: float(krippendorff.alpha(reliability_data=data, level_of_measurement=level)) for level in levels},
    }


nan = np.nan
wikipedia = [[nan, nan, nan, nan, nan, 3, 4, 1, 2, 1, 1, 3, 3, nan, 3],
             [1, nan, 2, 1, 3, 3, 4, 3, nan, nan, nan, nan, nan, nan, nan],
             [nan, nan, 2, 1, 3, 4, 4, nan, 2, 1, 1, 3, 3, nan, 4]]
latent = rng.integers(1, 6, size=40)
ratings = np.clip(latent[None, :] + rng.choice([-1, 0, 0, 0, 1], size=(4, 40)), 1, 5).astype(float)
ratings[rng.uniform(size=(4, 40)) < 0.2] = nan
scores = np.clip(rng.beta(2, 2, size=30)[None, :] + rng.normal(0, 0.12, size=(3, 30)), 0, 1)
scores[rng.uniform(size=(3, 30)) < 0.15] = nan
out["krippendorff"] = [
    alpha_case("package-docstring", wikipedia, ("nominal", "ordinal", "interval", "ratio")),
    alpha_case("four-raters-likert", ratings, ("nominal", "ordinal", "interval", "ratio")),
    alpha_case("three-raters-scores", scores, ("nominal", "interval")),
]


# Prediction-powered inference for a mean: labels Y on n items, a judge's predictions on those
# n and on N more.
def ppi_case(name, y, yhat, yhat_unlabeled):
    y, yhat, yhat_unlabeled = (np.asarray(v, dtype=float) for v in (y, yhat, yhat_unlabeled))
    n, big_n = len(y), len(yhat_unlabeled)
    tuned = ppi_mean_ci(y, yhat, yhat_unlabeled, alpha=0.05)
    untuned = ppi_mean_ci(y, yhat, yhat_unlabeled, alpha=0.05, lam=1)
    classical = classical_mean_ci(y, alpha=0.05)
    everything = np.concatenate([yhat, yhat_unlabeled])
    naive = classical_mean_ci(everything, alpha=0.05)
    # The lambda ppi_mean_ci tunes, through the same private function it calls.
    centre = ppi_mean_pointestimate(y, yhat, yhat_unlabeled, lam=1)
    lam = ppi_py.ppi._calc_lam_glm(y - centre, yhat - centre, yhat_unlabeled - centre, np.eye(1), clip=True)
    return {
        "name": name, "labels": y.tolist(), "predictions_labeled": yhat.tolist(),
        "predictions_unlabeled": yhat_unlabeled.tolist(), "n": n, "N": big_n,
        "lambda": float(lam),
        "estimate": number(ppi_mean_pointestimate(y, yhat, yhat_unlabeled)),
        "lower": number(tuned[0]), "upper": number(tuned[1]),
        "untuned_estimate": number(ppi_mean_pointestimate(y, yhat, yhat_unlabeled, lam=1)),
        "untuned_lower": number(untuned[0]), "untuned_upper": number(untuned[1]),
        "classical_estimate": float(y.mean()),
        "classical_lower": number(classical[0]), "classical_upper": number(classical[1]),
        "naive_estimate": float(everything.mean()),
        "naive_lower": number(naive[0]), "naive_upper": number(naive[1]),
    }


def judged(truth_values, flip):
    """A judge that flips a pass/fail label with probability flip[label]."""
    u = rng.uniform(size=len(truth_values))
    return np.where(truth_values == 1, (u >= flip[1]).astype(float), (u < flip[0]).astype(float))


y_all = (rng.uniform(size=340) < 0.62).astype(float)
yhat_all = judged(y_all, {0: 0.25, 1: 0.08})  # a lenient judge: passes a quarter of the failures
c_all = rng.beta(3, 2, size=340)
chat_all = np.clip(c_all + 0.06 + rng.normal(0, 0.08, size=340), 0, 1)
s_all = rng.beta(2, 2, size=250)
out["ppi"] = [
    ppi_case("binary", y_all[:40], yhat_all[:40], yhat_all[40:]),
    ppi_case("continuous", c_all[:40], chat_all[:40], chat_all[40:]),
    # Shrunk predictions (0.4 y): cov / var > 1, so lambda is clipped to 1.
    ppi_case("shrunk-clipped-to-one", s_all[:30], 0.4 * s_all[:30] + 0.3, 0.4 * s_all[30:] + 0.3),
    # Predictions unrelated to the labels (negatively correlated here): lambda clipped to 0.
    ppi_case("uninformative-clipped-to-zero", s_all[:30], 1 - s_all[:30] + rng.normal(0, 0.05, 30), rng.beta(2, 2, 220)),
]

# Bradley-Terry on pairwise verdicts with ties.
systems = ["alpha", "beta", "gamma", "delta"]
true_strength = np.array([0.8, 0.3, 0.0, -0.6])
games = []
for _ in range(60):
    i, j = rng.choice(4, size=2, replace=False)
    p_i = 1 / (1 + math.exp(true_strength[j] - true_strength[i]))
    u = rng.uniform()
    score = 0.5 if u < 0.2 else (1.0 if rng.uniform() < p_i else 0.0)
    games.append((systems[i], systems[j], score))
expanded = []  # (winner, loser): a decisive game twice, a tie once each way
for a, b, score in games:
    i, j = systems.index(a), systems.index(b)
    if score == 1.0:
        expanded += [(i, j), (i, j)]
    elif score == 0.0:
        expanded += [(j, i), (j, i)]
    else:
        expanded += [(i, j), (j, i)]
ilsr = choix.ilsr_pairwise(4, expanded, alpha=0, tol=1e-13, max_iter=10_000)
mm = choix.mm_pairwise(4, expanded, alpha=0, tol=1e-13, max_iter=100_000)
assert np.max(np.abs(ilsr - mm)) < 1e-8, (ilsr, mm)
win_rates = []
for a in systems:
    for b in systems:
        if a == b:
            continue
        wins = sum(1 for x, y, s in games if (x, y, s) == (a, b, 1.0) or (x, y, s) == (b, a, 0.0))
        losses = sum(1 for x, y, s in games if (x, y, s) == (a, b, 0.0) or (x, y, s) == (b, a, 1.0))
        ties = sum(1 for x, y, s in games if {x, y} == {a, b} and s == 0.5)
        n = wins + losses + ties
        if n == 0:
            continue
        lo, hi = proportion_confint(wins + ties / 2, n, alpha=0.05, method="wilson")
        win_rates.append({"a": a, "b": b, "wins": wins, "losses": losses, "ties": ties,
                          "rate": (wins + ties / 2) / n, "lower": float(lo), "upper": float(hi)})
out["bradley_terry"] = {
    "systems": systems,
    "games": [{"a": a, "b": b, "score": s} for a, b, s in games],
    "strengths": [float(v) for v in ilsr],
    "strengths_mm": [float(v) for v in mm],
    "win_rates": win_rates,
}

# Power of the two-sided paired t-test, and the plans built on it.
out["noncentral_t_cdf"] = [
    {"t": t, "df": df, "nc": nc, "p": float(stats.nct.cdf(t, df, nc))}
    for t, df, nc in ((1.96, 10, 0.5), (-2.1, 5, 1.0), (2.0, 50, 2.8), (-1.98, 120, 2.8), (0.3, 3, -1.5),
                      (3.5, 30, 6.0), (2.0, 2000, 2.0), (-0.5, 7, 0.0), (1.0, 40, 12.0))
]
out["power"] = [
    {"effect_size": d, "n": n, "alpha": a,
     "power": float(ttest_power(d, nobs=n, alpha=a, alternative="two-sided"))}
    for d, n, a in ((0.2, 50, 0.05), (0.5, 20, 0.05), (0.1, 800, 0.05), (0.35, 40, 0.01), (-0.3, 60, 0.05))
]
plans = []
for difference, sd, a, p in ((0.05, 0.3, 0.05, 0.8), (0.1, 0.5, 0.05, 0.8), (0.02, 0.15, 0.05, 0.8),
                             (0.2, 0.4, 0.05, 0.8), (0.03, 0.4, 0.05, 0.9), (0.5, 0.5, 0.01, 0.8),
                             (-0.08, 0.35, 0.05, 0.8)):
    solved = TTestPower().solve_power(effect_size=difference / sd, alpha=a, power=p, alternative="two-sided")
    # The smallest whole n with enough power, straight from the power function.
    exact = 2
    while ttest_power(difference / sd, nobs=exact, alpha=a, alternative="two-sided") < p:
        exact += 1
    assert exact == math.ceil(solved), (exact, solved)
    plans.append({"difference": difference, "sd": sd, "alpha": a, "power": p,
                  "nobs_solved": float(solved), "items_needed": exact})
out["items_needed"] = plans
detectable = []
for n, sd, a, p in ((20, 0.3, 0.05, 0.8), (50, 0.25, 0.05, 0.8), (200, 0.4, 0.05, 0.9), (1000, 0.1, 0.01, 0.8),
                    (5, 1.0, 0.05, 0.8)):
    solved = TTestPower().solve_power(nobs=n, alpha=a, power=p, alternative="two-sided")
    # statsmodels stops brentq at xtol 1e-5; the same root to 1e-14 for a tight comparison.
    tight = optimize.brentq(lambda d: ttest_power(d, nobs=n, alpha=a, alternative="two-sided") - p,
                            solved / 2, solved * 2, xtol=1e-15, rtol=1e-15)
    detectable.append({"n": n, "sd": sd, "alpha": a, "power": p,
                       "effect_solved": float(solved) * sd, "effect_tight": float(tight) * sd})
out["minimum_detectable_effect"] = detectable


def paired_sd(pa, pb, rho):
    """The sd of B − A for two pass/fail outcomes, from their 2x2 joint distribution (the
    correlation cut to what two such outcomes can have)."""
    both = pa * pb + rho * math.sqrt(pa * (1 - pa) * pb * (1 - pb))
    both = min(max(both, max(0.0, pa + pb - 1)), min(pa, pb))
    p = {-1: pa - both, 1: pb - both}  # A only, B only
    p[0] = 1 - p[-1] - p[1]
    values = np.array([-1.0, 0.0, 1.0])
    probs = np.array([p[-1], p[0], p[1]])
    mean = (values * probs).sum()
    return float(math.sqrt(((values - mean) ** 2 * probs).sum()))


out["paired_binary_sd"] = [
    {"pass_rate_a": a, "pass_rate_b": b, "correlation": r, "sd": paired_sd(a, b, r)}
    for a, b, r in ((0.6, 0.7, 0.0), (0.6, 0.7, 0.5), (0.8, 0.85, 0.8), (0.9, 0.5, 0.9), (0.3, 0.3, -0.2))
]


def epoch_sd(sd, k, rho):
    """The sd of the mean of k epochs with equal variance and pairwise correlation rho."""
    cov = sd * sd * ((1 - rho) * np.eye(k) + rho * np.ones((k, k)))
    return float(math.sqrt(np.ones(k) @ cov @ np.ones(k)) / k)


out["epoch_adjusted_sd"] = [
    {"sd": s, "epochs": k, "rho": r, "adjusted": epoch_sd(s, k, r)}
    for s, k, r in ((0.4, 1, 0.3), (0.4, 5, 0.0), (0.4, 5, 0.3), (0.25, 10, 0.8), (0.5, 3, 1.0))
]

path = os.path.join(os.path.dirname(__file__), "..", "..", "Tests", "LoupeEvalsTests", "Fixtures",
                    "reference-review-stats.json")
with open(path, "w") as f:
    json.dump(out, f, indent=1, allow_nan=False)
print("wrote", os.path.normpath(path))
