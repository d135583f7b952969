"""The small test scenes the testing services and the production gate share: an OS2 jumper, a
sealed DAC link, and a power-meter test recorded on a cable."""

from datetime import UTC, datetime
from decimal import Decimal

from inventory.core.choices import CableKind, DeviceRole, Polarity
from inventory.services import testing as svc
from inventory.services.plant import cables as cable_services
from tests import factories as f

NOW = datetime(2026, 11, 1, 10, 0, tzinfo=UTC)


def os2_jumper():
    """[gpu-1 eth0]--J-1 (3 m OS2 MPO-12/APC)--[leaf-1 Ethernet1/1]"""
    _, gpu = f.twin_port_device("gpu-1", role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}")
    _, leaf = f.twin_port_device("leaf-1", u=20)
    return f.jumper("J-1", gpu[0], leaf[0], polarity=Polarity.B, length_m=Decimal("3"))


def olts(cable, losses, *, when=NOW, wl=1310, link=None):
    readings = [svc.FibreReading(fibre=i, wavelength_nm=wl, loss_db=x) for i, x in enumerate(losses, start=1)]
    return svc.cable_test_record_olts(
        cable=cable, data=svc.OltsInput(readings=readings, tested_at=when, link=link), now=when
    )


def dac_link():
    """[gpu-9 eth0]==DAC D-1==[leaf-9 Ethernet1/1], sealed: link qualification only."""
    _, gpu = f.twin_port_device("gpu-9", role=DeviceRole.GPU_NODE, with_modules=False)
    _, leaf = f.twin_port_device("leaf-9", u=30, with_modules=False)
    cable, _ = cable_services.cable_install(
        label="D-1",
        kind=CableKind.DAC,
        a=cable_services.EndSpec(port=gpu[0]),
        b=[cable_services.EndSpec(port=leaf[0])],
        serial_a="DAC-A1",
        serial_b="DAC-B1",
        length_m=Decimal("2"),
    )
    return cable


def qualify(cable, *, when=NOW):
    """A passing link qualification of ``dac_link``'s D-1: its own serials, full speed, a clean
    15-minute soak."""
    data = svc.QualificationInput(
        serial_a="DAC-A1",
        serial_b="DAC-B1",
        link_up=True,
        speed_gbps=400,
        lanes=4,
        pre_fec_ber=1e-8,
        uncorrectable_codewords=0,
        soak_minutes=15,
    )
    return svc.link_qualify(cable=cable, data=data, now=when)
