#!/usr/bin/env bash
# One GPU call (at most ~8 minutes) that continues the CPU campaign from the committed resume point.
#
# The campaign's state lives in vision/training/resume/ (fp16 weights + state.json); this script
# trains a new phase of both stages on the GPU, exports the candidate ONNX models, measures
# them with `tiplu report`, and copies back what a session commits. It was written for the
# `device` tool's H200 machine (python3 there holds torch + onnxruntime + opencv, but not
# ultralytics, flask or sqlite-utils: carry them as wheels in .whl/, see the device README)
# and has not run on a GPU yet. Session 4 ran every step on CPU with the dry-run knobs below (all passed,
# 14 minutes, most of it rendering the SVG decks' faces, which a carried data/faces skips), and trained with the
# polars stand-in in vision/training/gpu/ in place of polars.
#
# Prepare here (once per session; .whl/ and data/ are git-ignored and travel with `carry`):
#   tiplu train import-real /path/to/cards-real-dev data/real
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#       --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 -d .whl \
#       ultralytics ultralytics-thop sqlite-utils sqlite-fts4 flask werkzeug itsdangerous blinker \
#       flask-wtf wtforms flask-babel babel segno waitress click-default-group tabulate python-dateutil
#   tiplu train decks                      # renders every installed SVG deck into data/faces (21 MB)
# Run (device tool): carry [".whl", "data/real", "data/faces"] (64 MiB in all: check `du -shc`), timeout_s 540,
# command (the machine has no SVG deck packages: the carried face cache stands in for them):
#   bash vision/training/train_gpu.sh
#
# Knobs (env): DET_EPOCHS (6), CLS_EPOCHS (4), CROPS (6000), TABLES (1200), WORKERS (16), DEVICE (0: the GPU;
# "cpu" for a dry run), SCENES (30 whole tables per held-out design) and REAL (all real val photos) for the report.
# A CPU dry run on a copy of the repository checks every step in a few minutes:
#   DET_EPOCHS=1 CLS_EPOCHS=1 CROPS=16 TABLES=8 WORKERS=2 DEVICE=cpu SCENES=2 REAL=4 bash vision/training/train_gpu.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PY:-python3}
DET_EPOCHS=${DET_EPOCHS:-6}; CLS_EPOCHS=${CLS_EPOCHS:-4}
CROPS=${CROPS:-6000}; TABLES=${TABLES:-1200}; WORKERS=${WORKERS:-16}
DEVICE=${DEVICE:-0}; SCENES=${SCENES:-30}; REAL=${REAL:-}
if [ "$DEVICE" = cpu ]; then CLS_DEVICE=cpu; else CLS_DEVICE=cuda; fi
OUT=${OUT:-runs/gpu_out}
mkdir -p "$OUT" runs
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
started=$(date +%s)
say() { echo "[$(( $(date +%s) - started ))s] $*"; }

# 1. data: domain-randomised crops and tables (procedural designs, held-out ones excluded), real train twice
#    and turned to any angle
say "generating"
[ -d data/real_turned/train ] || $TIPLU train turn-real data/real data/real_turned --copies 2
[ -f data/gpu_crops/data.yaml ] || $TIPLU generate data/gpu_crops --count "$CROPS" --seed 31 --crop --randomise \
    --procedural 0.5 --val-fraction 0.02 --workers "$WORKERS"
[ -f data/gpu_tables/data.yaml ] || $TIPLU generate data/gpu_tables --count "$TABLES" --seed 32 --size 640x480 \
    --randomise --procedural 0.5 --val-fraction 0 --workers "$WORKERS"
cat > runs/gpu_mix.yaml <<YAML
path: $PWD/data
train: [gpu_crops/train.txt, gpu_tables/train.txt, real/train/images, real/train/images, real_turned/train/images]
val: real/val/images
names: {0: corner}
YAML

# 2. both stages from the resume point, each in a new phase of its schedule (a warm restart: the GPU's epochs
#    run on new, bigger data, and a schedule near its end would train them at its floor rate); the resume
#    point follows every epoch
say "stage 1"
$TIPLU accumulate extend detector --epochs "$DET_EPOCHS" --lr-max 0.002 --lr-min 0.0001 \
    --reason "GPU run: $CROPS crops and $TABLES tables, batch 64"
$TIPLU accumulate extend classifier --epochs "$CLS_EPOCHS" --lr-max 0.0005 --lr-min 0.00003 --reason "GPU run"
$TIPLU accumulate detector runs/gpu_mix.yaml --epochs "$DET_EPOCHS" --batch 64 --workers "$WORKERS" --device "$DEVICE"
say "stage 2"
$TIPLU accumulate classifier data/real data/real_turned data/gpu_crops --epochs "$CLS_EPOCHS" --max-images 6000 \
    --device "$CLS_DEVICE"

# 3. the candidate, measured as the model card measures (real val turned, held-out tables, samples)
say "export and report"
$TIPLU accumulate export --out runs/gpu_candidate
$TIPLU report runs/gpu_candidate --real-val data/real/val --scenes "$SCENES" ${REAL:+--max-real "$REAL"} \
    --out runs/gpu_report || true

# 4. what comes back (at most 8 files): the resume point, the candidate and its report
cp vision/training/resume/detector.pt vision/training/resume/classifier.pt vision/training/resume/state.json "$OUT"/
cp runs/gpu_candidate/corners.onnx runs/gpu_candidate/corner_classifier.onnx runs/gpu_candidate/model.json "$OUT"/
[ -f runs/gpu_report/report.md ] && cp runs/gpu_report/report.md runs/gpu_report/report.json "$OUT"/ || true
say "done: copy $OUT/{detector.pt,classifier.pt,state.json} into vision/training/resume/ and commit;" \
    "ship the candidate only if its report beats models/README.md"
