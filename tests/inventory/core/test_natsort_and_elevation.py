"""Natural order of the names people read, and the rack drawing's geometry (pure)."""

from inventory.core.elevation import BAND_MIN, FREE_BAND, RackDevice, Socket, rack_elevation, socket_status
from inventory.core.natsort import natural_key, natural_sorted


def test_ports_sort_as_people_count_them():
    names = ["Front 10", "Front 2", "Front 1", "front 11", "Rear 1", "Ethernet1/10", "Ethernet1/2"]
    assert natural_sorted(names) == [
        "Ethernet1/2",
        "Ethernet1/10",
        "Front 1",
        "Front 2",
        "Front 10",
        "front 11",
        "Rear 1",
    ]
    assert natural_key("eth2") < natural_key("eth10") and natural_key(None) == ("",)


def test_the_drawing_puts_devices_at_their_u_top_down_and_folds_free_space():
    """A 48 U rack: a 2 U panel at U40-41, a 1 U switch at U46, a 4 U node at U10-13."""
    devices = [
        RackDevice("node", 10, 4, "GPU node", [Socket("OSFP1", "faulty"), Socket("OSFP2")]),
        RackDevice("panel", 40, 2, "Patch panel"),
        RackDevice("switch", 46, 1, "Leaf switch", [Socket("OSFP1", None, has_module=True)]),
    ]
    e = rack_elevation(u_height=48, devices=devices)
    labels = [(b.u_text, b.device.name if b.device else "free") for b in e.bands]
    assert labels == [
        ("U47-48", "free"),
        ("U46", "switch"),
        ("U42-45", "free"),
        ("U40-41", "panel"),
        ("U14-39", "free"),
        ("U10-13", "node"),
        ("U1-9", "free"),
    ]
    # Bands stack without gaps; every device is at least one touch target tall.
    assert all(a.y + a.h == b.y for a, b in zip(e.bands, e.bands[1:], strict=False))
    assert e.height == e.bands[-1].y + e.bands[-1].h
    assert all(b.h >= BAND_MIN for b in e.bands if b.device) and all(
        b.h == FREE_BAND for b in e.bands if not b.device
    )
    node = next(b for b in e.bands if b.device and b.device.name == "node")
    assert [s.css for s in node.sockets] == ["sk-faulty", "sk-empty"]
    switch = next(b for b in e.bands if b.device and b.device.name == "switch")
    assert switch.sockets[0].css == "sk-module"


def test_a_socket_with_several_cables_shows_the_worst():
    assert socket_status(["in_production", "degraded"]) == "degraded"
    assert socket_status(["in_production", "faulty", "planned"]) == "faulty"
    assert socket_status([]) is None
