"""int8 copies of a model folder's networks: ONNX Runtime's static quantization (QDQ, per-channel weights).

Why: stage 1, stage 2 and the orientation network run in float32; int8 convolutions run about
twice as fast on a CPU with 8-bit dot products (x86 VNNI, a Raspberry Pi 5's Cortex-A76), and
weigh a quarter. Static quantization fixes each activation's int8 range beforehand, from the
inputs the networks see while the float model reads **calibration photos**: real photos (the
real train split, never val) and tables rendered in the drawn training designs (never a
held-out design), each read the way the app reads it (:func:`vision.pipeline.read_photo`: every
pass, window, crop and turn), so each network is calibrated on its own inputs.

One command writes a model folder whose chosen networks are int8 (the others copied as they are)::

    tiplu train quantize models runs/int8 --real data/real/train --rendered 8
    tiplu report runs/int8 --out runs/rep_int8        # then adopt a network only where no row falls
    tiplu calibrate --calibrate data/calib data/real/val:0 --test data/test data/real/val:1 --keep \
        --model runs/int8 --write runs/int8/model.json  # the networks' bytes are in the calibration's fingerprint

Re-run it after any network is retrained: it reads the folder given, so a new stage 2 is
quantized from the new float weights. A network already int8 is refused (quantize the float one).

>>> sorted(NETWORKS)
['classifiers', 'detector', 'orientation']
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from vision.detector import CardDetector
from vision.pipeline import read_photo
from vision.settings import CLASSES_FILE, DETECTOR_FILE, INFO_FILE, read_settings

#: The networks a folder may have quantized, by the name the command takes.
NETWORKS = ("detector", "classifiers", "orientation")
#: At most this many of stage 1's recorded inputs (batches of looks) calibrate it, chosen evenly at
#: random: each is up to 3 x 960 x 960 floats, and the calibrator keeps every layer's output of each.
MAX_STAGE1_FEEDS = 32
#: Stage 2's and the orientation network's recorded crops are fed in batches of this many.
CROP_BATCH = 256
#: Nodes of stage 1 left in float, by name prefix: the detection head (model.23: its last convolutions, the box
#: decoding, and the final concatenation of pixel coordinates with 0-1 scores, which one int8 scale cannot hold
#: both of), the first convolution (the photo's own pixels) and the attention block (model.10). Quantized
#: too, real val's card F1 fell 0.013 (all), 0.012 (all but the head); left float, 0.004.
DETECTOR_FLOAT_PREFIX = ("/model.23/", "/model.0/", "/model.10/")


class QuantizeError(ValueError):
    """The folder or the calibration photos cannot be quantized; the message says what to give."""


@dataclass
class _Recorder:
    """An ONNX Runtime session that keeps a copy of every input it is fed (``feeds``)."""

    session: Any
    feeds: list[dict[str, np.ndarray]] = field(default_factory=list)

    def run(self, outputs: Any, feed: dict[str, np.ndarray]) -> Any:
        self.feeds.append({name: np.array(value, copy=True) for name, value in feed.items()})
        return self.session.run(outputs, feed)

    def get_inputs(self) -> Any:
        return self.session.get_inputs()


@dataclass(frozen=True)
class CalibrationFeeds:
    """What each network of a folder was fed while the float model read the calibration photos."""

    detector: list[dict[str, np.ndarray]]
    classifiers: list[dict[str, np.ndarray]]
    orientation: list[dict[str, np.ndarray]]

    def summary(self) -> dict[str, int]:
        return {"detector_batches": len(self.detector),
                "classifier_crops": sum(len(next(iter(f.values()))) for f in self.classifiers),
                "orientation_crops": sum(len(next(iter(f.values()))) for f in self.orientation)}


def calibration_photos(real: Sequence[Path], rendered: int, seed: int = 0,
                       max_real: int | None = 60) -> Iterator[np.ndarray]:
    """The photos the networks are calibrated on: a seeded sample of ``max_real`` of the real YOLO folders'
    images, then ``rendered`` tables (1280 x 960; one in four a 12-megapixel far table, so the tiles are
    seen) in the drawn training designs, of the report's table kinds in turn."""
    import cv2

    from vision.training.data.dataset import iter_samples
    from vision.training.data.decks import drawn_decks
    from vision.training.measure.report import FAR_FILL, FAR_SIZE, TABLE_KINDS, TABLE_SIZE
    from vision.training.data.scenes import render_scene

    samples = [s for folder in real for s in iter_samples(folder)]
    if real and not samples:
        raise QuantizeError(f"{', '.join(map(str, real))}: no labelled photos; give the real train split "
                            "(tiplu train import-real PATH/cards-real-dev data/real, then data/real/train)")
    rng = np.random.default_rng(seed)
    if max_real is not None and len(samples) > max_real:
        samples = [samples[i] for i in sorted(rng.choice(len(samples), max_real, replace=False))]
    for sample in samples:
        image = cv2.imread(str(sample.image))
        if image is not None:
            yield image
    decks = drawn_decks()
    for i in range(rendered):
        far = i % 4 == 3
        look: dict[str, Any] = {"size": FAR_SIZE, "fill": FAR_FILL} if far else {"size": TABLE_SIZE}
        yield render_scene(np.random.default_rng([seed, 53, i]), TABLE_KINDS[i % len(TABLE_KINDS)], decks=decks,
                           designs_per_scene=1, **look).image


def record_feeds(folder: Path, photos: Iterator[np.ndarray], seed: int = 0) -> CalibrationFeeds:
    """Read every photo with the float model of ``folder`` as the app does, keeping each network's inputs
    (stage 1's thinned to :data:`MAX_STAGE1_FEEDS` batches, chosen evenly at random)."""
    detector = CardDetector(folder)
    stage1 = _Recorder(detector._det)
    members = [_Recorder(session) for session, _ in detector._members]
    detector._det = stage1
    detector._members = [(recorder, name) for recorder, (_, name) in zip(members, detector._members)]
    orientation = None
    if detector._orientation is not None:
        orientation = _Recorder(detector._orientation[0])
        detector._orientation = (orientation, detector._orientation[1])
    rng = np.random.default_rng(seed)
    kept: list[dict[str, np.ndarray]] = []
    seen = 0
    for image in photos:
        read_photo(image, detector)
        for feed in stage1.feeds:  # reservoir sampling: every batch equally likely to be kept
            seen += 1
            if len(kept) < MAX_STAGE1_FEEDS:
                kept.append(feed)
            elif (slot := int(rng.integers(seen))) < MAX_STAGE1_FEEDS:
                kept[slot] = feed
        stage1.feeds.clear()
    crops = members[0].feeds if members else []  # every member is fed the same crops
    return CalibrationFeeds(kept, _rebatched(crops), _rebatched(orientation.feeds if orientation else []))


def _rebatched(feeds: Sequence[dict[str, np.ndarray]]) -> list[dict[str, np.ndarray]]:
    """Feeds of one input name joined and cut again into batches of :data:`CROP_BATCH`."""
    if not feeds:
        return []
    name = next(iter(feeds[0]))
    joined = np.concatenate([f[name] for f in feeds])
    return [{name: joined[k:k + CROP_BATCH]} for k in range(0, len(joined), CROP_BATCH)]


class _Feeds:
    """ONNX Runtime's calibration data reader over recorded feeds."""

    def __init__(self, feeds: Sequence[dict[str, np.ndarray]]) -> None:
        self._feeds = iter(feeds)

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self._feeds, None)

    def rewind(self) -> None:  # pragma: no cover - ONNX Runtime calls it for some methods only
        pass


def is_quantized(path: Path) -> bool:
    """Does the ONNX file hold int8 weights already (QDQ or QLinear nodes)?"""
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    return any(node.op_type in ("QuantizeLinear", "DequantizeLinear", "QLinearConv", "ConvInteger")
               for node in model.graph.node)


def dequantized(path: Path) -> Any:
    """The float network an int8 one (QDQ) computes but for its 8-bit rounding, as an ONNX model: each weight
    dequantized into a float initializer under its float name, each activation's quantize-dequantize pair
    taken out. What averaging and fine-tuning read; a float network comes back as it is.
    """
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(path))
    graph = model.graph
    inits = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    produced_by = {out: node for node in graph.node for out in node.output}
    renamed: dict[str, str] = {}
    kept, dropped = [], set()
    for node in graph.node:
        if node.op_type == "DequantizeLinear" and all(name in inits for name in node.input):
            values, scale = inits[node.input[0]], inits[node.input[1]]
            zero = inits[node.input[2]] if len(node.input) > 2 else np.zeros((), values.dtype)
            axis = next((a.i for a in node.attribute if a.name == "axis"), 1)
            shape = [-1 if k == axis % max(values.ndim, 1) else 1 for k in range(values.ndim)] if scale.ndim else []
            weights = (values.astype(np.float32) - zero.astype(np.float32).reshape(shape)) * scale.reshape(shape)
            name = node.input[0].removesuffix("_quantized")  # the float weight's own name, where it is free
            name = node.output[0] if name in inits else name
            graph.initializer.append(numpy_helper.from_array(weights.astype(np.float32), name))
            renamed[node.output[0]] = name
            dropped.update(node.input)
        elif node.op_type == "DequantizeLinear" and produced_by.get(node.input[0]) is not None \
                and produced_by[node.input[0]].op_type == "QuantizeLinear":
            renamed[node.output[0]] = produced_by[node.input[0]].input[0]
            dropped.update(node.input[1:])
        elif node.op_type != "QuantizeLinear":
            kept.append(node)
    for node in kept:
        for k, name in enumerate(node.input):
            node.input[k] = renamed.get(name, name)
    for out in graph.output:
        out.name = renamed.get(out.name, out.name)
    used = {name for node in kept for name in node.input}
    floats = [i for i in graph.initializer if i.name in used and i.name not in dropped]
    del graph.initializer[:]
    graph.initializer.extend(floats)
    del graph.node[:]
    graph.node.extend(kept)
    return helper.make_model(graph, opset_imports=model.opset_import, ir_version=model.ir_version)


def quantize_network(src: Path, dst: Path, feeds: Sequence[dict[str, np.ndarray]], *,
                     exclude_prefixes: Sequence[str] = ()) -> Path:
    """``src`` as int8 calibrated on ``feeds``, written to ``dst``: QDQ, signed 8-bit weights per output
    channel, unsigned 8-bit activations (ONNX Runtime fuses only those into integer convolutions on x86; on
    ARM it runs them too). Nodes whose name starts with one of ``exclude_prefixes`` stay float. Each
    activation's range is the least and most it took over ``feeds`` (ONNX Runtime's histogram methods need
    every feed of one shape, and stage 1's looks come in several).
    """
    import tempfile

    import onnx
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    if not feeds:
        raise QuantizeError(f"{src.name}: no calibration inputs were recorded; give photos it reads")
    if is_quantized(src):
        raise QuantizeError(f"{src}: already int8; quantize the float network it came from")
    with tempfile.TemporaryDirectory() as work:
        prepared = Path(work) / "prepared.onnx"
        quant_pre_process(str(src), str(prepared), skip_symbolic_shape=True)
        nodes = [n.name for n in onnx.load(str(prepared)).graph.node]
        exclude = [n for n in nodes if n.startswith(tuple(exclude_prefixes))]
        quantize_static(str(prepared), str(dst), _Feeds(feeds), quant_format=QuantFormat.QDQ, per_channel=True,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, nodes_to_exclude=exclude,
                        extra_options={"ActivationSymmetric": False})
    return dst


def quantize_model(src: Path, dst: Path, *, real: Sequence[Path], rendered: int = 12,
                   networks: Sequence[str] = NETWORKS, seed: int = 0,
                   say: Callable[[str], None] = lambda line: None) -> dict[str, Any]:
    """A copy of the model folder ``src`` in ``dst`` whose ``networks`` are int8 (:func:`quantize_network`),
    calibrated on :func:`calibration_photos`; returns what was done (also written as ``dst/quantized.json``)."""
    unknown = sorted(set(networks) - set(NETWORKS))
    if unknown:
        raise QuantizeError(f"networks {', '.join(unknown)}: give some of {', '.join(NETWORKS)}")
    if not (src / DETECTOR_FILE).is_file():
        raise QuantizeError(f"{src}: no {DETECTOR_FILE}; give a model folder (models/, runs/cand)")
    if dst.resolve() == src.resolve():
        raise QuantizeError(f"{dst}: give a new folder; the float networks in {src} are what is quantized")
    settings = read_settings(src)
    dst.mkdir(parents=True, exist_ok=True)
    for name in (INFO_FILE, CLASSES_FILE, DETECTOR_FILE, *settings.classifiers,
                 *([settings.orientation] if settings.orientation else [])):
        if (src / name).is_file():
            shutil.copyfile(src / name, dst / name)
    say(f"reading the calibration photos with {src}'s float networks ...")
    feeds = record_feeds(src, calibration_photos(real, rendered, seed), seed)
    done: dict[str, Any] = {"source": str(src), "real": [str(r) for r in real], "rendered": rendered,
                            "seed": seed, "feeds": feeds.summary(), "networks": {}}
    plan: list[tuple[str, str, list[dict[str, np.ndarray]], Sequence[str]]] = []
    if "detector" in networks:
        plan.append(("detector", DETECTOR_FILE, feeds.detector, DETECTOR_FLOAT_PREFIX))
    if "classifiers" in networks:
        plan += [("classifiers", name, feeds.classifiers, ()) for name in settings.classifiers]
    if "orientation" in networks and settings.orientation:
        plan.append(("orientation", settings.orientation, feeds.orientation, ()))
    for network, name, network_feeds, exclude in plan:
        say(f"quantizing {name} on {len(network_feeds)} batches ...")
        quantize_network(src / name, dst / name, network_feeds, exclude_prefixes=exclude)
        done["networks"][name] = {"float_bytes": (src / name).stat().st_size, "int8_bytes": (dst / name).stat().st_size}
    (dst / "quantized.json").write_text(json.dumps(done, indent=1) + "\n")
    return done
