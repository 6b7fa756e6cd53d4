#!/usr/bin/env bash
# One GPU call (at most ~9 minutes) that trains stage 1 further: two arms side by side on the one GPU.
#
# Written for the `device` tool's H200 machine: python3 there holds torch, onnxruntime and opencv, but not
# ultralytics, and the call takes at most 64 MiB of files with it, the repository included. So the
# data is made here and carried shrunk (`tiplu train pack`: 320 px WebP, the size stage 1 trains at), the
# turned real photos are made there from the carried ones, and the machine trains and brings back weights only:
# the candidates are exported and measured here (`tiplu accumulate export`, `tiplu report`), on the CPU the
# app runs on. Generating the data there would take about half of the call, so it is made here.
#
# Prepare here (data/ and .whl/ are git-ignored and travel with `carry`):
#   tiplu generate data/g22_crops --count 2000 --seed 41 --crop --randomise --procedural 0.5 \
#       --random-palettes 0.3 --words 0.2 --val-fraction 0 --scenes meld_row fan declared maal_spread tunnela table
#   tiplu generate data/g22_tables --count 900 --seed 42 --size 640x480 --randomise --procedural 0.5 \
#       --random-palettes 0.3 --words 0.2 --val-fraction 0
#   tiplu generate data/table_dr --count 300 --seed 22 --size 640x480 --randomise --procedural 0.5 --val-fraction 0
#   tiplu generate data/g31_stacks --count 400 --seed 43 --crop --card-px 160 400 --randomise --procedural 0.5 \
#       --random-palettes 0.3 --val-fraction 0 --scenes tunnela   (optional, 3.9 MiB packed: stacked copies at
#       the big pass's scale, where a table's tunnela indices lie 20-30% of an index apart)
#   tiplu train pack data/real/train data/gpu/real_train;  tiplu train pack data/real/val data/gpu/real_val
#   tiplu train pack data/g22_crops data/gpu/crops --limit 1800;  tiplu train pack data/g22_tables data/gpu/tables
#   tiplu train pack data/table_dr data/gpu/table_dr
#   tiplu train pack data/g31_stacks data/gpu/stacks
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#       --platform manylinux2014_x86_64 -d .whl ultralytics==8.4.190 ultralytics-thop==2.2.3 \
#       ultralytics-platform==0.1.99 onnxslim==0.1.98
# Run (device tool): carry [".whl", "data/gpu"] (check `du -shc --apparent-size` with the repository: 64 MiB in
# all), timeout_s 570, command: bash vision/training/train_gpu.sh
# Then here: for each weight file that came back, a resume folder under runs/ (the file as detector.pt beside the
# arm's state.json) and `tiplu accumulate export --resume-dir DIR --out runs/cand` and `tiplu report runs/cand`.
# The arms start from the shipped ONNX files (models/), never from a committed resume point.
#
# Knobs (env): EPOCHS (30 per arm), BUDGET (seconds the arms may train, 450), WORKERS (data workers per arm, 7),
# BATCH (64), SNAP (keep every SNAP-th epoch, 10), ARMS ("name:lr_max:lr_min ..."), DEVICE (0: the GPU),
# FRACTION (of the training images each epoch, 1.0).
# A CPU dry run checks every step in a few minutes:
#   PY=.venv/bin/python EPOCHS=3 SNAP=1 BUDGET=400 WORKERS=1 BATCH=8 FRACTION=0.01 DEVICE=cpu \
#       bash vision/training/train_gpu.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PY:-python3}
EPOCHS=${EPOCHS:-30}; BUDGET=${BUDGET:-450}; WORKERS=${WORKERS:-7}; BATCH=${BATCH:-64}; SNAP=${SNAP:-10}
DEVICE=${DEVICE:-0}; FRACTION=${FRACTION:-1.0}; ARMS=${ARMS:-"A:0.002:0.0001 B:0.0007:0.00005"}
OUT=${OUT:-runs/gpu_out}
DATA=$PWD/data/gpu
mkdir -p "$OUT" runs
OUT=$(cd "$OUT" && pwd)  # the arms run in copies of the repository: paths from here made absolute
case $PY in /*) ;; */*) PY=$PWD/$PY ;; esac
started=$(date +%s)
say() { echo "[$(( $(date +%s) - started ))s] $*"; }
if [ -d .whl ]; then
    $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
    export PYTHONPATH=/tmp/site:$PWD
else
    export PYTHONPATH=$PWD
fi
# polars (Ultralytics reads its results.csv with it) is not on the GPU machine and too big to carry: a stand-in
$PY -c "import polars" 2>/dev/null || export PYTHONPATH=$PYTHONPATH:$PWD/vision/training/gpu
export YOLO_OFFLINE=1 YOLO_AUTOINSTALL=0 PYTHONUNBUFFERED=1
TIPLU="$PY -m web.cli"
say "$($PY -c 'import torch, ultralytics; print("torch", torch.__version__, "cuda", torch.cuda.is_available(), "ultralytics", ultralytics.__version__)')"
command -v nvidia-smi >/dev/null && nvidia-smi -L || true

# 1. the real train photos turned to any angle (cheap here, and not carried), and the mix: the tables twice,
#    real train three times, so that whole tables and real photos are not outweighed by the crops; the
#    stacked copies (tunnelas and dublees at table distance, where carried) twice, what the enrolled tables miss
[ -d "$DATA/turned/train" ] || $TIPLU train turn-real "$DATA/real_train" "$DATA/turned" --copies 3 --seed 5
STACKS=""
[ -d "$DATA/stacks/images" ] && STACKS=", stacks/images, stacks/images"
MIX=$PWD/runs/gpu_mix.yaml
cat > "$MIX" <<YAML
path: $DATA
train: [crops/images, tables/images, tables/images, table_dr/images, real_train/images, real_train/images, real_train/images, turned/train/images$STACKS]
val: real_val/images
names: {0: corner}
YAML
say "data: $(find "$DATA" -name '*.webp' -o -name '*.jpg' | wc -l) images"

# 2. every arm starts from the shipped stage 1 (models/corners.onnx, its batch norms calibrated on real train)
#    in a new cosine phase of EPOCHS; the arms train side by side, each in a copy of the repository, until
#    BUDGET runs out (the resume point and snapshots follow every epoch, so a cut arm keeps what it did)
$TIPLU accumulate init --from models --real "$DATA/real_train" --resume-dir runs/gpu_start
rm -f "$DATA"/*/labels.cache "$DATA"/*/*/labels.cache
pids=()
for arm in $ARMS; do
    IFS=: read -r name hi lo <<<"$arm"
    work=/tmp/arm_$name
    rm -rf "$work"; mkdir -p "$work"
    cp -r scorer vision web models pyproject.toml "$work"/
    mkdir -p "$work/runs"; cp -r runs/gpu_start "$work/runs/resume"
    (cd "$work" && export PYTHONPATH=${PYTHONPATH/$PWD/$work} &&
        $TIPLU accumulate extend detector --resume-dir runs/resume --epochs "$EPOCHS" --lr-max "$hi" --lr-min "$lo" \
            --reason "GPU arm $name: from the shipped stage 1, $EPOCHS epochs at $hi to $lo, batch $BATCH" &&
        timeout --signal=TERM "$BUDGET" \
            $TIPLU accumulate detector "$MIX" --resume-dir runs/resume --epochs "$EPOCHS" \
            --batch "$BATCH" --workers "$WORKERS" --device "$DEVICE" --snapshot-every "$SNAP" --fraction "$FRACTION" \
        > "$OUT/arm_$name.log" 2>&1; echo "arm $name exit $?" >> "$OUT/arm_$name.log") &
    pids+=($!)
    # the arms share the data's label caches: the first arm writes them, the others start once they are whole
    for _ in $(seq 120); do
        [ -f "$DATA/crops/labels.cache" ] && [ -f "$DATA/real_val/labels.cache" ] && break
        sleep 1
    done
done
say "arms started: $ARMS"
wait "${pids[@]}" || true
say "arms done"

# 3. what comes back (at most 8 files, 16 MiB each): per arm its log, its last epoch (resume/) and up to two
#    earlier snapshots, so that the report here can say whether a shorter phase read better
for arm in $ARMS; do
    name=${arm%%:*}; runs=/tmp/arm_$name/runs
    tail -n 3 "$OUT/arm_$name.log" || true
    [ -f "$runs/resume/state.json" ] && tar -cf "$OUT/arm_${name}_last.tar" -C "$runs" resume/detector.pt resume/classifier.pt resume/state.json
    last=$($PY -c "import json; print(json.load(open('$runs/resume/state.json'))['detector']['epochs_done'])" \
        2>/dev/null || echo 0)
    snaps=$(cd "$runs" && ls -v accumulate/snapshots/*.pt 2>/dev/null | grep -v "_e$last.pt" | tail -n 2 || true)
    [ -n "$snaps" ] && tar -cf "$OUT/arm_${name}_snaps.tar" -C "$runs" $snaps
done
ls -la "$OUT"
say "done: per arm, resume/ in arm_X_last.tar and snapshots in arm_X_snaps.tar; export and report them here"
