#!/usr/bin/env bash
# GPU proof (issue K): run on a machine with a CUDA device, from the repository root, and paste the table it prints.
#
#   1. every CUDA-marked test (pytest -m cuda);
#   2. OpticsBench and VCR built on the CPU and on CUDA into two folders, compared image by image
#      (scripts/compare_builds.py; contract: byte-identical, or at most one grey level where float summation order
#      differs between devices);
#   3. --workers scaling 1, 2, 4, 8, 16 of a CPU build (samples/s and speed-up over --workers 1);
#   4. the attacks: PGD-10 samples/s on EfficientNet-Lite0, corruptgen vs torchattacks (scripts/bench_attacks.py,
#      batch 32 on CUDA), and an adversarial build (PGD + CW-L2, GPU_CHECK_ADV_IMAGES inputs, default 8) on the CPU
#      and on CUDA, compared image by image like step 2 (without CUDA: batch 4, 1 input);
#   5. corruptgen bench --device cuda for every family (extra options: GPU_CHECK_BENCH_ARGS, e.g. "--repeats 1").
#
# Without a CUDA device it prints "no CUDA device", runs the CPU parts (the CPU build is compared with a second CPU
# build at --batch-size 1 instead) and exits 0. Sizes: GPU_CHECK_IMAGES (inputs per build, default 64),
# GPU_CHECK_WORKERS (default "1 2 4 8 16"), GPU_CHECK_SCALING_FAMILY (default syn2nat), GPU_CHECK_OUT (work folder,
# default a temporary one, removed at the end). Exit status 1 when a check fails.
set -uo pipefail

IMAGES=${GPU_CHECK_IMAGES:-64}
WORKERS=${GPU_CHECK_WORKERS:-"1 2 4 8 16"}
SCALING_FAMILY=${GPU_CHECK_SCALING_FAMILY:-syn2nat}
SCALING_IMAGES=${GPU_CHECK_SCALING_IMAGES:-128}
STEPS=${GPU_CHECK_STEPS:-"1 2 3 4 5"}
PY=${PYTHON:-python}
if [[ -n "${GPU_CHECK_OUT:-}" ]]; then OUT=$GPU_CHECK_OUT; mkdir -p "$OUT"; else OUT=$(mktemp -d); trap 'rm -rf "$OUT"' EXIT; fi
ROWS=()
FAILED=0
row() { ROWS+=("| $1 | $2 | $3 |"); echo "[${SECONDS}s] | $1 | $2 | $3 |"; }  # printed as it comes, the table again at the end
fail() { FAILED=1; }
want() { [[ " $STEPS " == *" $1 "* ]]; }

compare_summary() {  # one line from a scripts/compare_builds.py table
    "$PY" - "$1" <<'EOF'
import sys
rows = [l.split("|")[1:-1] for l in open(sys.argv[1]) if l.startswith("| ") and not l.startswith("| subset")]
images = sum(int(r[1]) for r in rows); same = sum(int(r[2]) for r in rows); worst = max(int(r[3]) for r in rows)
print(f"{len(rows)} subsets, {same}/{images} images byte-identical, max abs diff {worst} grey level(s)")
EOF
}

DEVICE=$("$PY" -c "import torch; print(torch.cuda.get_device_name(0) if torch.cuda.is_available() else '')")
if [[ -z "$DEVICE" ]]; then
    echo "no CUDA device: running the CPU parts only"
    row "device" "-" "no CUDA device (CPU parts only)"
else
    echo "CUDA device: $DEVICE"
    row "device" "cuda" "$DEVICE"
fi

# 1. CUDA-marked tests
if want 1; then
if [[ -n "$DEVICE" ]]; then
    if "$PY" -m pytest -q -m cuda -p no:cacheprovider > "$OUT/cuda_tests.log" 2>&1; then status=passed; else status=FAILED; fail; fi
    row "pytest -m cuda" "" "$status: $(tail -n 1 "$OUT/cuda_tests.log")"
else
    row "pytest -m cuda" "" "skipped: no CUDA device"
fi
fi

# 2. CPU vs CUDA builds, compared image by image
if want 2; then
for family in opticsbench vcr; do
    "$PY" -m corruptgen build "$family" --limit "$IMAGES" --out "$OUT/cpu" --no-progress > /dev/null 2>&1 || { row "build $family" cpu FAILED; fail; continue; }
    if [[ -n "$DEVICE" ]]; then other=cuda; args=(--device cuda); else other="cpu --batch-size 1"; args=(--batch-size 1); fi
    "$PY" -m corruptgen build "$family" --limit "$IMAGES" --out "$OUT/other" "${args[@]}" --no-progress > /dev/null 2>&1 || { row "build $family" "$other" FAILED; fail; continue; }
    if "$PY" scripts/compare_builds.py "$OUT/cpu/$family" "$OUT/other/$family" > "$OUT/compare_$family.md"; then verdict=ok; else verdict=FAILED; fail; fi
    row "cpu vs $other: $family" "--limit $IMAGES" "$verdict: $(compare_summary "$OUT/compare_$family.md")"
done
fi

# 3. --workers scaling of a CPU build
if want 3; then
# distinct inputs (the 10 sample photos give 10): crops of them at spread offsets and sizes, as an image folder
"$PY" - "$OUT/scaling_src/photos" "$SCALING_IMAGES" <<'EOF'
import io
import sys
from pathlib import Path
import numpy as np
from PIL import Image
from corruptgen.io.sources.samples import SamplesSource
out, n = Path(sys.argv[1]), int(sys.argv[2])
out.mkdir(parents=True, exist_ok=True)
source = SamplesSource()
photos = [np.asarray(Image.open(io.BytesIO(source.read(i))).convert("RGB")) for i in range(len(source.items()))]
rng = np.random.default_rng(0)
for i in range(n):
    photo = photos[i % len(photos)]
    h, w = photo.shape[:2]
    side = int(min(h, w) * rng.uniform(0.5, 0.9))
    y, x = rng.integers(0, h - side + 1), rng.integers(0, w - side + 1)
    Image.fromarray(photo[y:y + side, x:x + side]).save(out / f"{i:05d}.png")
EOF
SHARD=$(( SCALING_IMAGES / 32 > 0 ? SCALING_IMAGES / 32 : 1 ))
base=""
for w in $WORKERS; do
    rm -rf "$OUT/scaling"
    start=$(date +%s.%N)
    if ! "$PY" -m corruptgen build "$SCALING_FAMILY" --source "imagefolder:$OUT/scaling_src" --shard-size "$SHARD" --workers "$w" \
            --out "$OUT/scaling" --no-progress > "$OUT/scaling.log" 2>&1; then
        row "--workers $w" "$SCALING_FAMILY" FAILED; fail; continue
    fi
    line=$("$PY" - "$OUT/scaling/$SCALING_FAMILY/manifest.json" "$start" "$base" <<'EOF'
import json, sys, time
seconds = time.time() - float(sys.argv[2])
samples = json.load(open(sys.argv[1]))["counts"]["samples"]
rate = samples / seconds
base = float(sys.argv[3]) if sys.argv[3] else rate
print(f"{rate:.6f} {samples} samples in {seconds:.1f} s: {rate:.1f} samples/s, {rate / base:.2f}x --workers 1")
EOF
)
    [[ -z "$base" ]] && base=${line%% *}
    row "--workers $w (CPU)" "$SCALING_FAMILY, $SCALING_IMAGES inputs, shard $SHARD" "${line#* }"
done
fi

# 4. attacks: PGD speed against torchattacks, and an adversarial build on the CPU vs CUDA
if want 4; then
if [[ -n "$DEVICE" ]]; then adv_device=cuda; adv_batch=32; else adv_device=cpu; adv_batch=4; fi
ADV_IMAGES=${GPU_CHECK_ADV_IMAGES:-$(( adv_batch / 4 ))}  # 8 on CUDA, 1 on the CPU (float64 surrogate: slow there)
if "$PY" scripts/bench_attacks.py --device "$adv_device" --batch-size "$adv_batch" --no-float64 > "$OUT/bench_attacks.txt" 2>&1; then
    row "PGD-10 vs torchattacks ($adv_device)" "EfficientNet-Lite0, batch $adv_batch" "$(tail -n 1 "$OUT/bench_attacks.txt")"
else
    row "PGD-10 vs torchattacks ($adv_device)" "EfficientNet-Lite0, batch $adv_batch" "FAILED (see $OUT/bench_attacks.txt)"; fail
fi
adv=(build adversarial --attacks pgd:eps=0.04,cw_l2 --limit "$ADV_IMAGES" --no-progress)
if "$PY" -m corruptgen "${adv[@]}" --workers 8 --out "$OUT/adv_cpu" > /dev/null 2>&1; then
    if [[ -n "$DEVICE" ]]; then other=cuda; args=(--device cuda); else other="cpu --batch-size 1"; args=(--batch-size 1); fi
    if "$PY" -m corruptgen "${adv[@]}" "${args[@]}" --out "$OUT/adv_other" > /dev/null 2>&1; then
        if "$PY" scripts/compare_builds.py "$OUT/adv_cpu/adversarial" "$OUT/adv_other/adversarial" > "$OUT/compare_adv.md"; then verdict=ok; else verdict=FAILED; fail; fi
        row "cpu vs $other: adversarial" "--limit $ADV_IMAGES, pgd + cw_l2" "$verdict: $(compare_summary "$OUT/compare_adv.md")"
    else
        row "build adversarial" "$other" FAILED; fail
    fi
else
    row "build adversarial" "cpu --workers 8" FAILED; fail
fi
fi

# 5. corruptgen bench on CUDA, every family (last: the longest step)
if want 5; then
if [[ -n "$DEVICE" ]]; then
    if "$PY" -m corruptgen bench --device cuda --images "$IMAGES" --json "$OUT/bench_cuda.json" ${GPU_CHECK_BENCH_ARGS:-} > "$OUT/bench_cuda.txt" 2>&1; then
        while IFS= read -r line; do ROWS+=("$line"); echo "[${SECONDS}s] $line"; done < <("$PY" - "$OUT/bench_cuda.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
for fam, f in r["families"].items():
    e = f.get("end_to_end") or {}
    rate = e.get("images_per_s")
    ratios = ", ".join(f"{k} {v:.1f}x" for k, v in f["ratios"].items() if v) or "-"
    shown = f"{rate:.1f} samples/s end to end" if rate else f.get("error", "n/a")
    print(f"| bench --device cuda | {fam} | {shown}; {ratios} |")
EOF
)
    else
        row "bench --device cuda" "all families" "FAILED (see $OUT/bench_cuda.txt)"; fail
    fi
else
    row "bench --device cuda" "all families" "skipped: no CUDA device"
fi
fi

echo
echo "| check | setting | result |"
echo "|---|---|---|"
printf '%s\n' "${ROWS[@]}"
echo
echo "$(nproc) CPU cores; contract for cpu vs cuda: byte-identical, or at most 1 grey level (float summation order)"
exit $FAILED
