#!/usr/bin/env bash
# GPU proof (issues K and 33): run on a machine with a CUDA device, from the repository root. It prints one Markdown
# table, each row as soon as it is known and the whole table again at the end; its rows replace README's "GPU proof"
# table. Every row carries the device, torch and CUDA version. The GPU headline comes first:
#
#   optics   OpticsBench end to end into shards: `corruptgen build opticsbench --device cuda` of GPU_CHECK_OPTICS_IMAGES
#            (default 2048) distinct JPEG inputs (224 px after the imagenet preprocessing, the bundled 25x25 kernels,
#            20 subsets + clean), --batch-size GPU_CHECK_OPTICS_BATCH (default 128), once per worker count in
#            GPU_CHECK_OPTICS_WORKERS (default "1 W", W = cores / 4, at least 2; each worker decodes and encodes on 8
#            I/O threads): samples written per second, for the whole command and from its first task to its last;
#   psf      the batched PSF convolution alone (scripts/bench_optics.py --device cuda, batch GPU_CHECK_PSF_BATCH,
#            default 128): float32 and the float64 corruption path, against the reference's per-image conv2d loop;
#   vcr      VCR's delta_v: the float64 VIF on the device (scripts/bench_vif.py: 64 pairs in one call, and as VCR's
#            search scores, 1 reference x 8 candidates), and a VCR build of GPU_CHECK_VCR_IMAGES (default 64) distinct
#            inputs on the CPU's cores (its delta_v search runs on the CPU);
#   pgd      PGD-10 on EfficientNet-Lite0, corruptgen vs torchattacks (scripts/bench_attacks.py, batch
#            GPU_CHECK_PGD_BATCH, default 128);
#   scaling  scripts/bench_scaling.py on the machine's cores: --workers 1, 2, 4, ... against the ceiling (the same bare
#            per-sample loop in N independent processes), GPU_CHECK_SCALING_INPUTS (default 160) inputs of imagenet-c:
#            a smaller workload than docs/benchmarks.md's table, to fit the run; one row per worker count;
# then the checks:
#   tests    every CUDA-marked test (pytest -m cuda);
#   builds   OpticsBench and VCR built on the CPU and on CUDA into two folders, compared image by image
#            (scripts/compare_builds.py; contract: byte-identical, or at most one grey level where float summation
#            order differs between devices), GPU_CHECK_IMAGES inputs (default 64: the 10 sample photos);
#   attacks  an adversarial build (PGD + CW-L2, GPU_CHECK_ADV_IMAGES inputs, default 8) on the CPU and on CUDA,
#            compared like the builds (without CUDA: a second CPU build at batch 1, 1 input);
#   bench    corruptgen bench --device cuda (GPU_CHECK_BENCH_ARGS, default "--families opticsbench --repeats 1").
#
# GPU_CHECK_STEPS (default all of the above, in that order) runs some of them. The default run takes about 8 minutes
# on a 16-core machine with an H100-class GPU. Without a CUDA device the GPU steps print "no CUDA device" rows, the
# CPU parts run (the CPU builds are compared with second CPU builds at --batch-size 1) and the exit status is 0.
# GPU_CHECK_OUT: work folder (default a temporary one, removed at the end). Exit status 1 when a check fails.
set -uo pipefail

PY=${PYTHON:-python}
DEV=${GPU_CHECK_DEVICE:-cuda}  # cpu: the GPU steps on the CPU (to check this script where there is no GPU)
CORES=$("$PY" -c "import os; print(len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count())")
IMAGES=${GPU_CHECK_IMAGES:-64}
OPTICS_IMAGES=${GPU_CHECK_OPTICS_IMAGES:-2048}
OPTICS_BATCH=${GPU_CHECK_OPTICS_BATCH:-128}
OPTICS_WORKERS=${GPU_CHECK_OPTICS_WORKERS:-"1 $(( CORES / 4 > 2 ? CORES / 4 : 2 ))"}
PSF_BATCH=${GPU_CHECK_PSF_BATCH:-128}
PGD_BATCH=${GPU_CHECK_PGD_BATCH:-128}
VCR_IMAGES=${GPU_CHECK_VCR_IMAGES:-64}
REPEATS=${GPU_CHECK_REPEATS:-3}  # timed runs of the psf, vcr and pgd measurements (medians)
SCALING_INPUTS=${GPU_CHECK_SCALING_INPUTS:-160}
BENCH_ARGS=${GPU_CHECK_BENCH_ARGS:-"--families opticsbench --repeats 1"}
STEPS=${GPU_CHECK_STEPS:-"optics psf vcr pgd scaling tests builds attacks bench"}
if [[ -n "${GPU_CHECK_OUT:-}" ]]; then OUT=$GPU_CHECK_OUT; mkdir -p "$OUT"; else OUT=$(mktemp -d); trap 'rm -rf "$OUT"' EXIT; fi
ROWS=()
FAILED=0
want() { [[ " $STEPS " == *" $1 "* ]]; }
fail() { FAILED=1; }

# the device column of every row: "<GPU> · torch <version> · CUDA <version>" (or no CUDA device)
{ read -r DEVICE; read -r MACHINE; } < <("$PY" - <<'EOF'
import torch
name = torch.cuda.get_device_name(0) if torch.cuda.is_available() else ""
print(name)
print(f"{name or 'no CUDA device'} · torch {torch.__version__} · CUDA {torch.version.cuda or 'none'}")
EOF
)
row() { ROWS+=("| $1 | $2 | $3 | $MACHINE |"); echo "[${SECONDS}s] | $1 | $2 | $3 | $MACHINE |"; }  # as it comes
nocuda() { row "$1" "$2" "skipped: no CUDA device"; }
gpu() { [[ -n "$DEVICE" || "$DEV" == cpu ]]; }  # the GPU steps run
if [[ -z "$DEVICE" ]]; then echo "no CUDA device: running the CPU parts only"; else echo "CUDA device: $DEVICE"; fi
echo "$CORES CPU cores"

inputs() {  # distinct JPEG inputs (scripts/bench_scaling.py), written once: imagefolder:<folder>
    [[ -d "$OUT/src" ]] || "$PY" scripts/bench_scaling.py inputs "$OUT/src" "$1" > /dev/null || return 1
    echo "imagefolder:$OUT/src"
}

compare_summary() {  # one line from a scripts/compare_builds.py table
    "$PY" - "$1" <<'EOF'
import sys
rows = [l.split("|")[1:-1] for l in open(sys.argv[1]) if l.startswith("| ") and not l.startswith("| subset")]
images = sum(int(r[1]) for r in rows); same = sum(int(r[2]) for r in rows); worst = max(int(r[3]) for r in rows)
print(f"{len(rows)} subsets, {same}/{images} images byte-identical, max abs diff {worst} grey level(s)")
EOF
}

# optics: OpticsBench end to end on the GPU, samples/s
if want optics; then
if gpu; then
    src=$(inputs "$OPTICS_IMAGES") || { row "OpticsBench end to end ($DEV)" "" "FAILED (inputs)"; fail; }
    for w in $OPTICS_WORKERS; do
        rm -rf "$OUT/optics" "$OUT/optics_trace.jsonl"
        setting="$OPTICS_IMAGES inputs, 224 px, 25x25 kernels, --workers $w --batch-size $OPTICS_BATCH"
        start=$("$PY" -c "import time; print(time.time())")
        if CORRUPTGEN_TRACE="$OUT/optics_trace.jsonl" "$PY" -m corruptgen build opticsbench --source "$src" --device "$DEV" \
                --workers "$w" --batch-size "$OPTICS_BATCH" --out "$OUT/optics" --no-progress > "$OUT/optics.log" 2>&1; then
            row "OpticsBench end to end ($DEV)" "$setting" "$("$PY" - "$OUT/optics/opticsbench/manifest.json" "$OUT/optics_trace.jsonl" "$start" <<'EOF'
import json, sys, time
from corruptgen.engine.trace import read
wall = time.time() - float(sys.argv[3])
samples = json.load(open(sys.argv[1]))["counts"]["samples"]
tasks = [e for e in read(sys.argv[2]) if e["event"] == "task"]
busy = max(e["t"] for e in tasks) - min(e["start"] for e in tasks)
print(f"**{samples / wall:,.0f} samples/s** for the whole command ({samples:,} samples in {wall:.1f} s); "
      f"{samples / busy:,.0f} samples/s from the first task to the last ({busy:.1f} s)")
EOF
)"
        else
            row "OpticsBench end to end ($DEV)" "$setting" "FAILED (see $OUT/optics.log)"; fail
        fi
    done
else
    nocuda "OpticsBench end to end (cuda)" "$OPTICS_IMAGES inputs, 224 px, 25x25 kernels"
fi
fi

# psf: the batched PSF convolution alone
if want psf; then
if gpu; then
    if "$PY" scripts/bench_optics.py --device "$DEV" --images "$PSF_BATCH" --engine-images 0 --repeats "$REPEATS" --min-seconds 0.3 > "$OUT/psf.txt" 2>&1; then
        row "PSF convolution ($DEV)" "batch $PSF_BATCH, 224 px, 25x25 per-image kernels" "$("$PY" - "$OUT/psf.txt" <<'EOF'
import sys
import re
found = {l[:58].strip(): re.search(r"([\d.]+) img/s .*\(\s*([\d.]+)x the loop\)", l[58:]) for l in open(sys.argv[1])}
def rate(label):
    m = found.get(label)
    return f"{float(m[1]):,.0f} img/s ({m[2]}x the loop)" if m else "n/a"
print(f"float32 (auto) {rate('psf_conv batched, method=auto (float32)')}; float64 FFT "
      f"{rate('psf_conv batched FFT (float64)')}; the corruption, uint8 -> uint8 "
      f"{rate('corruption batch_fn, uint8 -> uint8 (float64 FFT)')}, image spectrum reused "
      f"{rate('same, image spectrum reused (next subset, same batch)')}; reference per-image conv2d loop "
      f"{rate('reference per-image, per-channel conv2d loop (float32)').split(' (')[0]}")
EOF
)"
    else
        row "PSF convolution ($DEV)" "batch $PSF_BATCH" "FAILED (see $OUT/psf.txt)"; fail
    fi
else
    nocuda "PSF convolution (cuda)" "batch $PSF_BATCH, 224 px, 25x25 per-image kernels"
fi
fi

# vcr: delta_v = 1 - VIF on the device, and a VCR build on the CPU cores
if want vcr; then
if gpu; then
    if "$PY" scripts/bench_vif.py --device "$DEV" --baseline-n 8 --repeats "$REPEATS" > "$OUT/vif.txt" 2>&1; then
        row "VCR delta_v: VIF float64 ($DEV)" "224 px pairs" "$("$PY" - "$OUT/vif.txt" <<'EOF'
import sys
rows = {l[:58].strip(): l[58:].split() for l in open(sys.argv[1]) if l.startswith(("corruptgen", "NumPy"))}
one = rows.get("corruptgen vif float64, 64 pairs in one call", ["0"])[0]
search = rows.get("corruptgen VIFReference float64, 1 ref x 8 cands", ["0"])[0]
base = next((v[0] for k, v in rows.items() if k.startswith("NumPy")), "0")
print(f"**{float(one):,.0f} samples/s** (64 pairs in one call); {float(search):,.0f} samples/s as VCR's search "
      f"scores (1 reference x 8 candidates); single-image NumPy baseline on the CPU {float(base):,.1f}/s")
EOF
)"
    else
        row "VCR delta_v: VIF float64 ($DEV)" "224 px pairs" "FAILED (see $OUT/vif.txt)"; fail
    fi
else
    nocuda "VCR delta_v: VIF float64 (cuda)" "224 px pairs"
fi
rm -rf "$OUT/vcr"
setting="$VCR_IMAGES distinct inputs, --workers $CORES"
start=$("$PY" -c "import time; print(time.time())")
if src=$(inputs "$VCR_IMAGES") && "$PY" -m corruptgen build vcr --source "$src" --limit "$VCR_IMAGES" --workers "$CORES" \
        --out "$OUT/vcr" --no-progress > "$OUT/vcr.log" 2>&1; then
    row "VCR build, delta_v searched (CPU)" "$setting" "$("$PY" - "$OUT/vcr/vcr/manifest.json" "$start" <<'EOF'
import json, sys, time
wall = time.time() - float(sys.argv[2])
m = json.load(open(sys.argv[1]))
samples = m["counts"]["samples"]
print(f"{samples / wall:,.1f} samples/s ({samples} samples from {m['counts']['inputs']} inputs in {wall:.1f} s, "
      "the whole command)")
EOF
)"
else
    row "VCR build, delta_v searched (CPU)" "$setting" "FAILED (see $OUT/vcr.log)"; fail
fi
fi

# pgd: PGD-10 images/s, corruptgen vs torchattacks
if want pgd; then
if gpu; then
    if "$PY" scripts/bench_attacks.py --device "$DEV" --batch-size "$PGD_BATCH" --repeats "$REPEATS" --no-float64 > "$OUT/bench_attacks.txt" 2>&1; then
        row "PGD-10 ($DEV)" "EfficientNet-Lite0, 224 px, batch $PGD_BATCH" "$("$PY" - "$OUT/bench_attacks.txt" <<'EOF'
import sys
text = open(sys.argv[1]).read().splitlines()
rate = {l.split("|")[1].strip(): float(l.split("|")[2]) for l in text if l.startswith("| ") and "`" in l}
ours = rate.get("corruptgen `pgd`, NCHW input", 0.0)
theirs = rate.get("torchattacks 3.5.1 `PGD`, NCHW input")
vs = f"; torchattacks {theirs:,.1f} images/s" if theirs else ""
print(f"**{ours:,.1f} images/s** (NCHW input){vs}; {text[-1]}")
EOF
)"
    else
        row "PGD-10 ($DEV)" "EfficientNet-Lite0, batch $PGD_BATCH" "FAILED (see $OUT/bench_attacks.txt)"; fail
    fi
else
    nocuda "PGD-10 (cuda)" "EfficientNet-Lite0, 224 px, batch $PGD_BATCH"
fi
fi

# scaling: --workers N against the ceiling, on this machine's cores
if want scaling; then
    setting="imagenet-c, $SCALING_INPUTS inputs, $CORES cores"
    status=""
    while IFS= read -r line; do  # one row per worker count, as soon as bench_scaling.py reports it
        case "$line" in
            "round "*) w=${line#*--workers }; row "--workers ${w%%:*} vs the ceiling (CPU)" "$setting" "${w#*: }" ;;
            "exit "*) status=${line#exit } ;;
            *) echo "$line" ;;
        esac
    done < <("$PY" scripts/bench_scaling.py --inputs "$SCALING_INPUTS" --out "$OUT/scaling.json" 2>&1 >"$OUT/scaling.md"; echo "exit $?")
    [[ "$status" == 0 ]] || { row "--workers vs the ceiling (CPU)" "$setting" "FAILED (exit $status)"; fail; }
fi

# tests: every CUDA-marked test
if want tests; then
if [[ -n "$DEVICE" ]]; then
    if "$PY" -m pytest -q -m cuda -p no:cacheprovider > "$OUT/cuda_tests.log" 2>&1; then status=passed; else status=FAILED; fail; fi
    row "pytest -m cuda" "" "$status: $(tail -n 1 "$OUT/cuda_tests.log")"
else
    nocuda "pytest -m cuda" ""
fi
fi

# builds: CPU vs CUDA, compared image by image
if want builds; then
for family in opticsbench vcr; do
    "$PY" -m corruptgen build "$family" --limit "$IMAGES" --out "$OUT/cpu" --no-progress > /dev/null 2>&1 || { row "build $family" cpu FAILED; fail; continue; }
    if [[ -n "$DEVICE" ]]; then other=cuda; args=(--device cuda); else other="cpu --batch-size 1"; args=(--batch-size 1); fi
    "$PY" -m corruptgen build "$family" --limit "$IMAGES" --out "$OUT/other" "${args[@]}" --no-progress > /dev/null 2>&1 || { row "build $family" "$other" FAILED; fail; continue; }
    if "$PY" scripts/compare_builds.py "$OUT/cpu/$family" "$OUT/other/$family" > "$OUT/compare_$family.md"; then verdict=ok; else verdict=FAILED; fail; fi
    row "cpu vs $other: $family" "--limit $IMAGES" "$verdict: $(compare_summary "$OUT/compare_$family.md")"
done
fi

# attacks: an adversarial build on the CPU vs CUDA
if want attacks; then
if [[ -n "$DEVICE" ]]; then other=cuda; args=(--device cuda); adv_images=${GPU_CHECK_ADV_IMAGES:-8}; else other="cpu --batch-size 1"; args=(--batch-size 1); adv_images=${GPU_CHECK_ADV_IMAGES:-1}; fi
adv=(build adversarial --attacks pgd:eps=0.04,cw_l2 --limit "$adv_images" --no-progress)
if "$PY" -m corruptgen "${adv[@]}" --workers 8 --out "$OUT/adv_cpu" > /dev/null 2>&1; then
    if "$PY" -m corruptgen "${adv[@]}" "${args[@]}" --out "$OUT/adv_other" > /dev/null 2>&1; then
        if "$PY" scripts/compare_builds.py "$OUT/adv_cpu/adversarial" "$OUT/adv_other/adversarial" > "$OUT/compare_adv.md"; then verdict=ok; else verdict=FAILED; fail; fi
        row "cpu vs $other: adversarial" "--limit $adv_images, pgd + cw_l2" "$verdict: $(compare_summary "$OUT/compare_adv.md")"
    else
        row "build adversarial" "$other" FAILED; fail
    fi
else
    row "build adversarial" "cpu --workers 8" FAILED; fail
fi
fi

# bench: corruptgen bench on CUDA (last: the longest step)
if want bench; then
if [[ -n "$DEVICE" ]]; then
    # shellcheck disable=SC2086  # BENCH_ARGS is a list of options
    if "$PY" -m corruptgen bench --device cuda --images "$IMAGES" --json "$OUT/bench_cuda.json" $BENCH_ARGS > "$OUT/bench_cuda.txt" 2>&1; then
        while IFS=$'\t' read -r fam result; do row "bench --device cuda" "$fam" "$result"; done < <("$PY" - "$OUT/bench_cuda.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
for fam, f in r["families"].items():
    e = f.get("end_to_end") or {}
    rate = e.get("images_per_s")
    ratios = ", ".join(f"{k} {v:.1f}x" for k, v in f["ratios"].items() if v) or "-"
    shown = f"{rate:.1f} samples/s end to end" if rate else f.get("error", "n/a")
    print(f"{fam}\t{shown}; {ratios}")
EOF
)
    else
        row "bench --device cuda" "$BENCH_ARGS" "FAILED (see $OUT/bench_cuda.txt)"; fail
    fi
else
    nocuda "bench --device cuda" "$BENCH_ARGS"
fi
fi

echo
echo "| check | setting | result | device · torch · CUDA |"
echo "|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
echo
echo "$CORES CPU cores; contract for cpu vs cuda: byte-identical, or at most 1 grey level (float summation order)"
[[ -f "$OUT/scaling.md" ]] && { echo; echo "scripts/bench_scaling.py on this machine:"; cat "$OUT/scaling.md"; }
exit $FAILED
