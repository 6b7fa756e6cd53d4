#!/usr/bin/env bash
# One-script GPU recipe for tiplu's corner detector: data, both stages, export, evaluation.
# Run from the repository root on a CUDA machine with the train extra installed
# (pip install -e '.[train]'), Debian packages librsvg2-bin + kdegames-card-data-kf5 (SVG decks),
# and the real dev photos (CC BY 4.0) at $REAL_SRC. Nothing is downloaded: YOLO_OFFLINE=1.
# Brings back: models/ (ONNX + classes.txt + model.json) and runs/gpu_report/*.json.
#
#   REAL_SRC=/path/to/cards-real-dev bash vision/training/train_gpu.sh
#
# Knobs (env): SYNTH_N (crop scenes, 20000), SYNTH_TABLE_N (full tables, 4000),
# DET_EPOCHS (150), DET_IMGSZ (640), CLS_EPOCHS (40), DEVICE (0), WORKERS (8).
set -euo pipefail
PY=${PY:-.venv/bin/python}
REAL_SRC=${REAL_SRC:?set REAL_SRC to the cards-real-dev folder}
SYNTH_N=${SYNTH_N:-20000}; SYNTH_TABLE_N=${SYNTH_TABLE_N:-4000}
DET_EPOCHS=${DET_EPOCHS:-150}; DET_IMGSZ=${DET_IMGSZ:-640}; CLS_EPOCHS=${CLS_EPOCHS:-40}
DEVICE=${DEVICE:-0}; WORKERS=${WORKERS:-8}
export YOLO_OFFLINE=1 YOLO_AUTOINSTALL=0
mkdir -p runs/gpu_report

# 1. data: real split (fixed seed, burst-wise), synthetic train designs, unseen-design holdout
$PY -m vision.training.dataset import-real "$REAL_SRC" data/real
[ -f data/synth_crop/data.yaml ] || $PY -m vision.training.generate data/synth_crop --count "$SYNTH_N" --crop --seed 1 --randomise --procedural 0.5 --workers "$WORKERS"
[ -f data/synth_table/data.yaml ] || $PY -m vision.training.generate data/synth_table --count "$SYNTH_TABLE_N" --seed 2 --randomise --procedural 0.5 --workers "$WORKERS"
[ -f data/synth_holdout/data.yaml ] || $PY -m vision.training.generate data/synth_holdout --count 200 --seed 2 --crop --decks holdout --workers "$WORKERS"
[ -f data/synth_holdout_table/data.yaml ] || $PY -m vision.training.generate data/synth_holdout_table --count 300 --seed 3 --decks holdout --workers "$WORKERS"

# 2. stage 1: class-agnostic corner detector on synthetic crops + tables + real train (real val only reported)
cat > runs/gpu_mix.yaml <<YAML
path: $(pwd)
train: [data/synth_crop/train.txt, data/synth_table/train.txt, data/real/train/images, data/real/train/images]
val: data/real/val/images
names: {0: corner}
YAML
$PY -m vision.training.train detector runs/gpu_mix.yaml --epochs "$DET_EPOCHS" --imgsz "$DET_IMGSZ" --batch 64 \
    --device "$DEVICE" --workers "$WORKERS" --name gpu_detector
# a crash? rerun with: $PY -m vision.training.train detector --resume runs/tiplu/gpu_detector/weights/last.pt

# 3. stage 2: crop classifier on real train crops + rendered faces of every training deck
$PY -m vision.training.train classifier data/real data/synth_crop --decks train --face-copies 20 --copies 10 \
    --max-images 6000 --epochs "$CLS_EPOCHS" --device cuda --out runs/tiplu/gpu_classifier

# 4. export (ONNX opset 17, dynamic input size) and measure on never-trained data
$PY -m vision.training.train export --detector runs/tiplu/gpu_detector/weights/last.pt \
    --classifier runs/tiplu/gpu_classifier/best.pt --imgsz 416 --out models
$PY -m vision.training.evaluate data/synth_holdout --json --imgsz 640 | tee runs/gpu_report/synth_holdout_640.json
$PY -m vision.training.evaluate data/synth_holdout_table --json --imgsz 960 | tee runs/gpu_report/synth_holdout_table_960.json
$PY -m vision.training.evaluate data/real/val --json | tee runs/gpu_report/real_val.json
$PY -m vision.training.report models --out runs/gpu_report/issue11   # the model-card table
$PY bench/bench_detector.py | tee runs/gpu_report/bench.txt
echo "done: commit models/ and update models/README.md with runs/gpu_report/*"
