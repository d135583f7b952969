"""MkDocs hooks (``mkdocs.yml``): regenerate the pages made from the code before every build."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tools import docs  # noqa: E402 - after the path is set


def on_pre_build(config, **kwargs):
    try:
        docs.generate(Path(config["docs_dir"]))
    except docs.DocsError as e:
        from mkdocs.exceptions import PluginError

        raise PluginError(f"docs: {e}") from e
