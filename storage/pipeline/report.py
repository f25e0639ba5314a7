"""The pipeline's report: plots, report.md and report.html from the collected
:class:`~storage.pipeline.report_data.ReportData`."""

from __future__ import annotations

import os

from .report_data import ReportData
from .report_plots import draw_plots
from .report_tables import html_page, markdown

__all__ = ["render"]


def render(data: ReportData, out_dir: str) -> dict[str, str]:
    """Draw the plots and write report.md and report.html into ``out_dir``; returns
    name -> path of every file written."""
    os.makedirs(out_dir, exist_ok=True)
    plots = draw_plots(data, out_dir)
    md = os.path.join(out_dir, "report.md")
    with open(md, "w", encoding="utf-8") as f:
        f.write(markdown(data, plots))
    page = os.path.join(out_dir, "report.html")
    with open(page, "w", encoding="utf-8") as f:
        f.write(html_page(data, plots))
    files = {"report.md": md, "report.html": page}
    files.update({os.path.basename(p): os.path.join(out_dir, p) for p in plots.values()})
    return files
