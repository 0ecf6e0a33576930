from __future__ import annotations

import dataclasses
from collections import defaultdict


@dataclasses.dataclass(frozen=True)
class StockItem:
    sku: str
    name: str
    quantity: int
    unit_price: float

    @property
    def value(self) -> float:
        return self.quantity * self.unit_price


class Inventory:
    """Tracks stock levels per warehouse."""

    def __init__(self) -> None:
        self._items: dict[str, dict[str, StockItem]] = defaultdict(dict)

    def add(self, warehouse: str, item: StockItem) -> None:
        existing = self._items[warehouse].get(item.sku)
        if existing is not None:
            item = dataclasses.replace(item, quantity=existing.quantity + item.quantity)
        self._items[warehouse][item.sku] = item

    def total_value(self, warehouse: str | None = None) -> float:
        houses = [warehouse] if warehouse else list(self._items)
        return sum(i.value for h in houses for i in self._items[h].values())

    def low_stock(self, threshold: int = 5) -> list[tuple[str, StockItem]]:
        return sorted(
            (
                (h, i)
                for h, items in self._items.items()
                for i in items.values()
                if i.quantity < threshold
            ),
            key=lambda pair: (pair[0], pair[1].sku),
        )
