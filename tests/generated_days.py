"""Which days a prepare generated to lay out its quotes, told apart from the quotes drawn again for
TAQ's trades (a side table drawn from every day's quotes: ``workloads/datasets/taq_trades.py``)."""
from __future__ import annotations


def record_laid_out_days(monkeypatch, taq) -> tuple[list[int], list[bool]]:
    """(the day indexes generated for the quotes' layout, one entry per drawing of the trades)."""
    cls = type(taq)
    real_generate, real_trades = cls.generate_day, cls.trades_frame
    laid_out: list[int] = []
    trades: list[bool] = []
    drawing: list[bool] = []

    def generate(self, day_index, *args, **kwargs):
        if not drawing:
            laid_out.append(day_index)
        yield from real_generate(self, day_index, *args, **kwargs)

    def trades_frame(self, *args, **kwargs):
        trades.append(True)
        drawing.append(True)
        try:
            return real_trades(self, *args, **kwargs)
        finally:
            drawing.pop()
    monkeypatch.setattr(cls, "generate_day", generate)
    monkeypatch.setattr(cls, "trades_frame", trades_frame)
    return laid_out, trades
