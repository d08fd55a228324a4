"""Every metric against small tables worked out by hand (the arithmetic is written next to each expectation)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from corruptgen.errors import CorruptgenError
from corruptgen.eval.metrics import MetricOptions, common, compute_metrics, imagenet_c, imagenet_p, optics, syn2nat
from corruptgen.eval.predictions import build_predictions


def table(rows, subsets=None, delta_v=None, family_meta=None):
    """Predictions from (subset, key, source_key, frame, label, top5) tuples."""
    cols = {"subset": [], "key": [], "source_key": [], "frame": [], "label": [], "top5": [], "prob5": []}
    for subset, key, src, frame, label, top5 in rows:
        top5 = list(top5) + [-1] * (5 - len(top5))
        for name, v in zip(cols, (subset, key, src, frame, label, top5, [0.2] * 5), strict=True):
            cols[name].append(v)
    cols["delta_v"] = delta_v if delta_v is not None else [math.nan] * len(rows)
    return build_predictions(cols, subsets or {}, family_meta or {}, with16=False)


# ---- common ---------------------------------------------------------------------------------------------------------


def _clean_noise():
    #            key  label  clean top-5        noise top-5
    data = [("a", 1, [1, 7], [1, 7]), ("b", 2, [2, 3], [9, 2]), ("c", 3, [0, 3], [9, 8]), ("d", -1, [5], [5])]
    rows = [("clean", k, k, 0, lab, c) for k, lab, c, _ in data] + [("noise", k, k, 0, lab, n) for k, lab, _, n in data]
    return table(rows, {"clean": {}, "noise": {"corruption": "noise", "severity": 1}})


def test_accuracy_consistency_rr_app():
    rows = common.subset_table(_clean_noise())
    clean, noisy = rows["clean"], rows["noise"]
    # clean: labelled a, b, c; top-1 hits a, b -> 2/3; label in top-5 for a, b, c -> 1
    assert clean["top1"] == pytest.approx(2 / 3) and clean["top5"] == 1.0 and clean["labelled"] == 3
    assert clean["error"] == pytest.approx(1 / 3) and clean["consistency"] == 1.0
    # noise: top-1 hit only a -> 1/3; top-5 hits a, b -> 2/3; same top-1 as clean for a and d -> 2/4
    assert noisy["top1"] == pytest.approx(1 / 3) and noisy["top5"] == pytest.approx(2 / 3)
    assert noisy["consistency"] == 0.5
    assert noisy["residual_robustness"] == pytest.approx(2 / 3 - 1 / 3)  # Eq. 2.1
    assert noisy["app"] == pytest.approx((1 / 3) / (2 / 3))  # Eq. 2.2
    s = common.summary(rows)
    assert s["clean_top1"] == pytest.approx(2 / 3) and s["mean_top1"] == pytest.approx(1 / 3)


def test_effective_robustness_given_and_fitted():
    clean, shift = [0.8, 0.6, 0.7], [0.5, 0.3, 0.45]
    er, beta, b = common.effective_robustness(clean, shift, beta=0.5, intercept=0.1)
    # 0.5 - (0.4 + 0.1) = 0; 0.3 - (0.3 + 0.1) = -0.1; 0.45 - (0.35 + 0.1) = 0
    assert er == pytest.approx([0.0, -0.1, 0.0]) and (beta, b) == (0.5, 0.1)
    er, beta, b = common.effective_robustness(clean, shift)
    # least squares: mean x 0.7, mean y 0.41667; slope (0.1*0.08333 + 0.1*0.11667) / 0.02 = 1.0; b = -0.28333
    assert beta == pytest.approx(1.0) and b == pytest.approx(0.41666667 - 0.7)
    assert er == pytest.approx([0.5 - 0.51666667, 0.3 - 0.31666667, 0.45 - 0.41666667])
    with pytest.raises(CorruptgenError, match="at least 2 models"):
        common.effective_robustness([0.8], [0.5])


def test_effective_robustness_option_in_compute_metrics():
    out = compute_metrics(_clean_noise(), "generic", MetricOptions(er_beta=0.5, er_intercept=0.0))
    # acc 1/3 - 0.5 * 2/3 = 0
    assert out["effective_robustness"]["subsets"]["noise"] == pytest.approx(0.0)


def test_label_free_data_needs_no_accuracy_flag():
    p = table([("clean", "a", "a", 0, -1, [1]), ("noise", "a", "a", 0, -1, [2])])
    with pytest.raises(CorruptgenError, match="no labelled image"):
        compute_metrics(p, "syn2nat")
    out = compute_metrics(p, "generic", MetricOptions(accuracy=False))
    assert out["subsets"]["noise"]["top1"] is None and out["subsets"]["noise"]["consistency"] == 0.0


# ---- ImageNet-C -----------------------------------------------------------------------------------------------------


def test_ce_and_relative_ce_against_alexnet():
    errors = {"gaussian_noise": {1: 0.5, 2: 0.6}}
    out = imagenet_c.corruption_errors(errors, 0.2)
    ce = out["corruptions"]["gaussian_noise"]
    # CE = (0.5 + 0.6) / (0.69528 + 0.82542) = 1.1 / 1.5207
    assert ce["ce"] == pytest.approx(1.1 / 1.5207)
    # rCE = ((0.5 - 0.2) + (0.6 - 0.2)) / ((0.69528 - 0.4345) + (0.82542 - 0.4345)) = 0.7 / 0.6517
    assert ce["relative_ce"] == pytest.approx(0.7 / 0.6517)
    assert out["mce"] == pytest.approx(1.1 / 1.5207) and not out["complete"]
    assert out["denominator_set"] == "alexnet-50k" and "76d9393" in out["reference"]


def test_ce_against_a_reference_results_table():
    rows = {"clean": {"error": 0.2}, "gaussian_noise_s1": {"error": 0.5}, "gaussian_noise_s2": {"error": 0.6},
            "frost_s1": {"error": 0.5}}  # fmt: skip
    ref_rows = {"clean": {"error": 0.3}, "gaussian_noise_s1": {"error": 0.6}, "gaussian_noise_s2": {"error": 0.8}}
    ref = imagenet_c.reference_from_rows(ref_rows, "alexnet-mine")
    out = imagenet_c.imagenet_c_metrics(rows, ref)
    gn = out["corruptions"]["gaussian_noise"]
    assert gn["ce"] == pytest.approx(1.1 / 1.4)  # (0.5 + 0.6) / (0.6 + 0.8)
    assert gn["relative_ce"] == pytest.approx(0.7 / 0.8)  # (0.3 + 0.4) / (0.3 + 0.5)
    assert "frost" not in out["corruptions"] and any("frost" in n for n in out["notes"])
    assert out["denominator_set"] == "reference:alexnet-mine"


def test_alexnet_table_matches_published_averages():
    avg = {"gaussian_noise": 0.886428, "brightness": 0.564592, "jpeg_compression": 0.606500, "saturate": 0.658248}
    for c, v in avg.items():
        assert np.mean(imagenet_c.ALEXNET_ERRORS[c]) == pytest.approx(v, abs=1e-6)
    assert len(imagenet_c.COMMON_15) == 15 and imagenet_c.ALEXNET_CLEAN_ERROR == 0.4345


def test_complete_imagenet_c_mce_equals_mean_ce():
    errors = {c: {s: 0.5 for s in range(1, 6)} for c in imagenet_c.COMMON_15}
    out = imagenet_c.corruption_errors(errors, 0.25)
    expect = np.mean([2.5 / sum(imagenet_c.ALEXNET_ERRORS[c]) for c in imagenet_c.COMMON_15])
    assert out["complete"] and out["mce"] == pytest.approx(expect) and out["mce_common15"] == pytest.approx(expect)


# ---- ImageNet-P -----------------------------------------------------------------------------------------------------


def test_flip_probability_by_hand():
    v1, v2 = np.array([1, 1, 2, 2, 1]), np.array([3, 3, 3, 3, 3])
    # consecutive, stride 1: pairs (0,1) same (1,2) flip (2,3) same (3,4) flip -> 2/4; v2 -> 0; mean 0.25
    assert imagenet_p.flip_probability([v1, v2], "consecutive", 1) == pytest.approx(0.25)
    # stride 2: (0,2) flip (1,3) flip (2,4) flip -> 1
    assert imagenet_p.flip_probability([v1], "consecutive", 2) == 1.0
    # noise: every frame vs frame 0: (0,1) same (0,2) flip (0,3) flip (0,4) same -> 0.5
    assert imagenet_p.flip_probability([v1], "first") == 0.5


def test_top5_distance_by_hand():
    a, b = np.array([[1, 2, 3, 4, 5]]), np.array([[2, 1, 3, 9, 8]])
    # ranks in b of a's classes: 1 -> 1, 2 -> 0, 3 -> 2, 4 -> >=5, 5 -> >=5:  |0-1| + |1-0| + |2-2| + |3-5| + |4-5| = 5
    assert imagenet_p.top5_distance_pairs(a, b).tolist() == [5]
    assert imagenet_p.top5_distance_pairs(a, a).tolist() == [0]


def test_top5_distance_matches_reference_ranking_dist():
    """The reference computes on full rank permutations (rankdata ordinal, cum_sum_top5); top-5 lists suffice."""
    from scipy.stats import rankdata

    rng = np.random.default_rng(0)
    logits = rng.normal(size=(6, 1000))
    logits[1:] = logits[0] + rng.normal(scale=0.3, size=(5, 1000))  # nearby frames share most of their top 5
    cum_sum_top5 = np.cumsum(np.asarray([0] + [1] * 5 + [0] * (999 - 5)))
    ranks = [rankdata(-f, method="ordinal").astype(int) for f in logits]

    def dist(sigma):
        return np.sum(np.abs(cum_sum_top5[:5] - cum_sum_top5[sigma - 1][:5]))

    ref = []
    perm1 = ranks[0]
    for perm2 in ranks[1:]:  # consecutive, stride 1
        ref.append(dist(perm2[np.argsort(perm1)]))
        perm1 = perm2
    top5 = np.argsort(-logits, axis=1)[:, :5]
    assert imagenet_p.top5_distance([top5], "consecutive", 1) == pytest.approx(np.mean(ref))
    assert np.mean(ref) > 0


def test_imagenet_p_metrics_from_table_and_reference():
    rows = [("clean", "v", "v", 0, 1, [1])]
    for t, p in enumerate([1, 1, 2, 2, 1]):
        rows.append(("translate", "v", "v", t, 1, [p, 7]))
    for t, p in enumerate([4, 5, 4, 4]):
        rows.append(("gaussian_noise", "w", "w", t, 1, [p]))
    subsets = {
        "clean": {},
        "translate": {"corruption": "translate", "frames": 5, "compare": "consecutive", "stride": 2},
        "gaussian_noise": {"corruption": "gaussian_noise", "frames": 4},
    }
    out = imagenet_p.imagenet_p_metrics(table(rows, subsets))
    per = out["perturbations"]
    assert set(per) == {"translate", "gaussian_noise"}
    assert per["translate"]["flip_probability"] == 1.0 and per["translate"]["stride"] == 2
    # noise -> compared with frame 0: (0,1) flip (0,2) same (0,3) same -> 1/3
    assert per["gaussian_noise"]["compare"] == "first" and per["gaussian_noise"]["flip_probability"] == pytest.approx(
        1 / 3
    )
    assert out["mFP"] == pytest.approx((1 + 1 / 3) / 2) and out["mFR"] is None
    assert "not available" in out["normalisation"]
    ref = {"translate": {"flip_probability": 0.5, "top5_distance": 2.0},
           "gaussian_noise": {"flip_probability": 0.5, "top5_distance": 1.0}}  # fmt: skip
    out = imagenet_p.imagenet_p_metrics(table(rows, subsets), ref)
    assert out["mFR"] == pytest.approx((1 / 0.5 + (1 / 3) / 0.5) / 2)


# ---- Syn2Nat --------------------------------------------------------------------------------------------------------


def test_syn2nat_score_and_categories():
    rows = {"clean": {"top1": 0.8}, "solarize": {"top1": 0.6, "residual_robustness": 0.2},
            "random_shadow": {"top1": 0.7, "residual_robustness": 0.1},
            "affines": {"top1": 0.3, "residual_robustness": 0.5}, "blur": {"top1": 0.1}}  # fmt: skip
    out = syn2nat.syn2nat_metrics(rows)
    assert out["score"] == pytest.approx((0.6 + 0.7 + 0.3) / 3) and out["n_corruptions"] == 3  # blur is not in the 18
    assert not out["complete"] and len(out["missing"]) == 15
    assert out["categories"]["1"]["top1"] == pytest.approx(0.65)  # solarize, random_shadow: category 1
    assert out["categories"]["2"]["top1"] == pytest.approx(0.3)  # affines: category 2
    assert out["mean_residual_robustness"] == pytest.approx((0.2 + 0.1 + 0.5) / 3)


ACC = np.array([
    # test:  clean  a     b     c       (rows: standard model, then trained with a, b, c)
    [0.8, 0.4, 0.5, 0.6],
    [0.7, 0.7, 0.6, 0.6],
    [0.8, 0.5, 0.8, 0.6],
    [0.8, 0.4, 0.4, 0.7],
])  # fmt: skip


def test_overlap_accuracy_mode_by_hand():
    o, undefined = syn2nat.overlap_matrix(ACC, mode="accuracy")
    # O(a,b) = 1/2 [(0.6-0.5)/(0.8-0.5) + (0.5-0.4)/(0.7-0.4)] = 1/2 [1/3 + 1/3]
    assert o[0, 1] == pytest.approx(1 / 3) and o[1, 0] == pytest.approx(1 / 3)
    # O(a,c) = 1/2 [(0.6-0.6)/(0.7-0.6) + (0.4-0.4)/(0.7-0.4)] = 0
    assert o[0, 2] == 0
    # O(b,c) = 1/2 [(0.6-0.6)/0.1 + (0.4-0.5)/0.3] < 0 -> max(0, .) = 0
    assert o[1, 2] == 0 and undefined == 0
    assert np.all(np.diag(o) == 1)


def test_overlap_ratio_mode_by_hand():
    o, _ = syn2nat.overlap_matrix(ACC, mode="ratio")
    # R = acc / clean acc of the model: R_std = [1, .5, .625, .75], R_a = [1, 1, 6/7, 6/7], R_b = [1, .625, 1, .75],
    # R_c = [1, .5, .5, .875]
    # O(a,b) = 1/2 [(6/7 - .625)/(1 - .625) + (.625 - .5)/(1 - .5)]
    assert o[0, 1] == pytest.approx(0.5 * ((6 / 7 - 0.625) / 0.375 + 0.125 / 0.5))
    # O(a,c) = 1/2 [(6/7 - .75)/(.875 - .75) + (.5 - .5)/(1 - .5)]
    assert o[0, 2] == pytest.approx(0.5 * (6 / 7 - 0.75) / 0.125)
    assert o[1, 2] == 0 and np.allclose(o, o.T)


def test_overlap_undefined_terms_are_counted():
    acc = ACC.copy()
    acc[3, 3] = acc[0, 3]  # training on c did not change accuracy on c: (R_jc - R_0c) / 0
    o, undefined = syn2nat.overlap_matrix(acc, mode="accuracy")
    assert undefined == 2 and np.isfinite(o).all()


def test_same_cluster_correlation_by_hand():
    v = np.array([[1, 2, 3], [2, 4, 6.5], [3, 2, 1]])
    # only (v1, v2) share a cluster: deviations [-1,0,1] and [-2.1667,-0.1667,2.3333]; r = 4.5 / (sqrt(2) * 3.18852)
    r = syn2nat.same_cluster_correlation(v, np.array([0, 0, 1]))
    assert r == pytest.approx(4.5 / (math.sqrt(2) * math.sqrt(10.1666667)), rel=1e-6)


def test_kmeans_finds_the_optimal_partition_and_is_seeded():
    import itertools

    x = np.array([[0, 0], [0.2, 0.1], [0.1, 0.3], [5, 5], [5.2, 4.9], [4.8, 5.3], [2.4, 2.6]])
    labels, _, inertia = syn2nat.kmeans(x, 2, n_init=10, seed=3)
    best = min(
        sum(((x[g] - x[g].mean(0)) ** 2).sum() for g in (np.array(s), np.array([i for i in range(7) if i not in s])))
        for r in range(1, 7) for s in itertools.combinations(range(7), r)
    )  # fmt: skip
    assert inertia == pytest.approx(best)
    assert labels[0] == labels[1] == labels[2] and labels[3] == labels[4] == labels[5] and labels[0] != labels[3]
    again = syn2nat.kmeans(x, 2, n_init=10, seed=3)
    assert (again[0] == labels).all() and again[2] == inertia


def test_find_categories_stopping_rule():
    # three blocks of three corruptions: overlap 0.8 inside a block, 0.05 across
    block = np.kron(np.eye(3), np.full((3, 3), 0.75)) + 0.05
    np.fill_diagonal(block, 1.0)
    found = syn2nat.find_categories(block, n_init=20, seed=0)
    assert found["k"] == 3 and found["stopped"]
    assert found["history"][0]["k"] == 2 and found["history"][0]["mean_same_cluster_correlation"] <= 0.5
    labels = found["labels"]
    assert len({tuple(labels[i : i + 3]) for i in (0, 3, 6)}) == 3 and all(
        len(set(labels[i : i + 3])) == 1 for i in (0, 3, 6)
    )


def test_algorithm2_by_hand_and_units():
    syn = {m: {"clean": c, "x": a, "y": b} for m, c, a, b in
           (("m1", 0.8, 0.5, 0.6), ("m2", 0.7, 0.5, 0.6), ("m3", 0.6, 0.3, 0.5), ("m4", 0.9, 0.8, 0.8))}  # fmt: skip
    nat = {m: {"clean": 100 * syn[m]["clean"], "natA": v} for m, v in (("m1", 60), ("m2", 55), ("m3", 45), ("m4", 80))}
    out = syn2nat.benchmark_correlations(syn, nat, [["x"], ["x", "y"]], synthetic_unit="fraction",
                                         natural_unit="percent")  # fmt: skip
    # natural RR (fractions): [0.2, 0.15, 0.15, 0.1]; bench ["x"] RR: [0.3, 0.2, 0.3, 0.1]
    # bench ["x","y"] RR: mean of ([0.3,0.2,0.3,0.1], [0.2,0.1,0.1,0.1]) = [0.25, 0.15, 0.2, 0.1]

    def pearson(a, b):
        a, b = np.array(a) - np.mean(a), np.array(b) - np.mean(b)
        return (a @ b) / math.sqrt((a @ a) * (b @ b))

    r1 = pearson([0.2, 0.15, 0.15, 0.1], [0.3, 0.2, 0.3, 0.1])
    r2 = pearson([0.2, 0.15, 0.15, 0.1], [0.25, 0.15, 0.2, 0.1])
    res = out["natural"]["natA"]
    assert res["r"] == pytest.approx([r1, r2]) and res["mean_r"] == pytest.approx((r1 + r2) / 2)  # mean over all
    assert 0 < res["mean_p"] < 1 and any("percent" in n for n in out["notes"])
    with pytest.raises(CorruptgenError, match="not in the synthetic table"):
        syn2nat.benchmark_correlations(syn, nat, [["zzz"]], synthetic_unit="fraction", natural_unit="percent")


def test_algorithm2_unit_is_declared_never_guessed():
    """A percent table whose values are all <= 1.5 (very low accuracies) must be read as percent when declared so:
    a guess would read it as fractions, and with a fraction-valued partner table the sign of r flips."""
    syn = {m: {"clean": c, "x": a} for m, c, a in
           (("m1", 0.8, 0.4), ("m2", 0.7, 0.5), ("m3", 0.6, 0.5), ("m4", 0.9, 0.4))}  # fmt: skip
    # natural accuracies in percent, all <= 1; the natural table has no clean column (synthetic clean is used)
    nat = {m: {"natA": v} for m, v in (("m1", 0.9), ("m2", 0.4), ("m3", 0.2), ("m4", 1.0))}
    res = syn2nat.benchmark_correlations(syn, nat, [["x"]], synthetic_unit="fraction", natural_unit="percent")
    nat_rr = [syn[m]["clean"] - nat[m]["natA"] / 100 for m in ("m1", "m2", "m3", "m4")]
    syn_rr = [syn[m]["clean"] - syn[m]["x"] for m in ("m1", "m2", "m3", "m4")]
    expected = float(np.corrcoef(nat_rr, syn_rr)[0, 1])
    assert res["natural"]["natA"]["mean_r"] == pytest.approx(expected) and expected > 0
    as_fraction = syn2nat.benchmark_correlations(syn, nat, [["x"]], synthetic_unit="fraction", natural_unit="fraction")
    assert as_fraction["natural"]["natA"]["mean_r"] < 0  # what the old guess computed: r flips sign
    assert res["units"] == {"synthetic": "fraction", "natural": "percent"}
    with pytest.raises(CorruptgenError, match="pass --unit percent"):  # percentages declared as fractions
        syn2nat.benchmark_correlations(syn, {m: {"natA": 60.0 + i} for i, m in enumerate(syn)}, [["x"]],
                                       synthetic_unit="fraction", natural_unit="fraction")  # fmt: skip
    with pytest.raises(TypeError):  # no default unit
        syn2nat.benchmark_correlations(syn, nat, [["x"]])


# ---- OpticsBench ----------------------------------------------------------------------------------------------------


def test_delta_to_defocus_baseline():
    top1 = {"clean": 0.8, "defocus_disk_s1": 0.6, "defocus_disk_s2": 0.4, "coma_s1": 0.5, "coma_s2": 0.45,
            "trefoil_s3": 0.2}  # fmt: skip
    out = optics.delta_to_baseline(top1)
    assert out["delta"] == pytest.approx({"coma_s1": -0.1, "coma_s2": 0.05})  # Eq. 3: Acc_c - Acc_b, same severity
    assert out["mean_delta"]["coma"] == pytest.approx(-0.025) and "trefoil_s3" not in out["delta"]


def test_kendall_tau_of_rankings():
    models = {"m1": {"coma_s1": 0.5, "defocus_disk_s1": 0.6}, "m2": {"coma_s1": 0.4, "defocus_disk_s1": 0.5},
              "m3": {"coma_s1": 0.3, "defocus_disk_s1": 0.7}}  # fmt: skip
    out = optics.kendall_rankings(models)
    # pairs (m1,m2) concordant, (m1,m3) and (m2,m3) discordant: tau = (1 - 2) / 3
    assert out["subsets"]["coma_s1"]["tau"] == pytest.approx(-1 / 3) and out["mean_tau"] == pytest.approx(-1 / 3)
    assert 0 < out["subsets"]["coma_s1"]["p"] <= 1
