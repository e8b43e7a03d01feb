"""The runner's watch on torch's lazy compiler imports (``runner/compilerstack.py``), on
modules of a temporary folder: what it times, where it says the import happened, and that
an import made inside another is set aside once."""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from bottleneck_lsp.runner import compilerstack


@pytest.fixture
def modules(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "lazy_outer.py").write_text("import time\ntime.sleep(0.05)\nimport lazy_inner\n")
    (tmp_path / "lazy_inner.py").write_text("import time\ntime.sleep(0.05)\n")
    (tmp_path / "lazy_other.py").write_text("import time\ntime.sleep(0.02)\n")
    (tmp_path / "lazy_broken.py").write_text("import time\ntime.sleep(0.02)\nraise ImportError('broken')\n")
    sys.path.insert(0, str(tmp_path))
    yield tmp_path
    sys.path.remove(str(tmp_path))
    for name in ("lazy_outer", "lazy_inner", "lazy_other", "lazy_broken"):
        sys.modules.pop(name, None)


def test_each_watched_import_is_timed_once_and_one_inside_another_is_in_its_time(modules: Path) -> None:
    calls: list[str] = []
    watch = compilerstack.LazyLoad(
        lambda filename: filename == __file__,
        lambda: calls.append("begin"),
        lambda: calls.append("end"),
        names=("lazy_outer", "lazy_inner", "lazy_other"),
    ).install()
    try:
        importlib.import_module("lazy_outer")  # OUTER
        importlib.import_module("lazy_other")
    finally:
        watch.uninstall()
    assert calls == ["begin", "end", "begin", "end"]  # the inner import set aside with the outer
    assert set(watch.seconds) == {"lazy_outer", "lazy_other"}
    assert watch.seconds["lazy_outer"] >= 0.1 and 0.02 <= watch.seconds["lazy_other"] < 0.1
    assert watch.seconds_of(("lazy_inner", "lazy_other")) == watch.seconds["lazy_other"]
    assert watch.seconds_of(("lazy_inner",)) is None
    source = Path(__file__).read_text().splitlines()
    outer = next(i for i, line in enumerate(source, 1) if line.endswith("# OUTER"))
    assert watch.where_of(("lazy_outer",)) == (__file__, outer)
    assert watch.where_of(("lazy_other",)) == (__file__, outer + 1)
    assert watch not in sys.meta_path  # all seen: it left


def test_what_is_already_imported_is_not_watched(modules: Path) -> None:
    import lazy_other  # noqa: F401

    watch = compilerstack.LazyLoad(lambda _f: True, names=("lazy_other", "lazy_inner")).install()
    try:
        assert watch.pending == {"lazy_inner"}
        import lazy_inner  # noqa: F401
    finally:
        watch.uninstall()
    assert set(watch.seconds) == {"lazy_inner"}


def test_imports_that_overlap_in_two_threads_are_set_aside_once_and_both_timed(modules: Path) -> None:
    calls: list[str] = []
    watch = compilerstack.LazyLoad(
        lambda _f: False,
        lambda: calls.append("begin"),
        lambda: calls.append("end"),
        names=("lazy_inner", "lazy_other"),
    ).install()
    try:
        threads = [
            threading.Thread(target=importlib.import_module, args=(name,))
            for name in ("lazy_inner", "lazy_other")
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        watch.uninstall()
    assert set(watch.seconds) == {"lazy_inner", "lazy_other"}
    assert calls.count("begin") == calls.count("end") >= 1 and calls[0] == "begin" and calls[-1] == "end"


def test_an_import_that_fails_is_not_counted_as_made(modules: Path) -> None:
    calls: list[str] = []
    watch = compilerstack.LazyLoad(
        lambda _f: True, lambda: calls.append("begin"), lambda: calls.append("end"), names=("lazy_broken",)
    ).install()
    try:
        with pytest.raises(ImportError, match="broken"):
            importlib.import_module("lazy_broken")
    finally:
        watch.uninstall()
    assert calls == ["begin", "end"]  # its time was set aside all the same
    assert watch.seconds == {} and watch.where == {} and watch.seconds_of(("lazy_broken",)) is None
