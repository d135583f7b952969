"""factory_boy factories and small topology builders, in one place."""

from __future__ import annotations

import factory
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from inventory.core.choices import (
    CableKind,
    ConnectorType,
    DeviceRole,
    Fabric,
    FormFactor,
    Polarity,
    Polish,
    PortKind,
    TransceiverStatus,
)
from inventory.db import bulk
from inventory.models import (
    Cage,
    Device,
    Port,
    PortAlias,
    PortMapping,
    Rack,
    Room,
    Row,
    Site,
    Team,
    Transceiver,
    TransceiverModel,
    Vendor,
)
from inventory.services.plant import cables as cable_services
from inventory.services.plant import transceivers as xcvr_services


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.PostGenerationMethodCall("set_password", "pw-for-tests-1")

    @factory.post_generation
    def role(self, create, extracted, **kwargs):
        if extracted:
            self.groups.add(Group.objects.get(name=extracted))
        self.save()


def field_crew(user) -> Team:
    """Put ``user`` in the field crew, the team of every site that has no team yet (and of the
    sites made later by ``SiteFactory``): a technician acts only in their team's sites."""
    team, _ = Team.objects.get_or_create(name="Field crew")
    team.members.add(user)
    for site in Site.objects.filter(team__isnull=True):
        site.team = team
        site.save(update_fields=["team"])
    return team


class SiteFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Site
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"Site {n}")
    slug = factory.LazyAttribute(lambda o: o.name.lower().replace(" ", "-"))
    team = factory.LazyFunction(lambda: Team.objects.filter(name="Field crew").first())


class RackFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Rack
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"R{n:02d}")
    row = factory.LazyFunction(
        lambda: Row.objects.get_or_create(
            room=Room.objects.get_or_create(site=SiteFactory(name="Hall Test"), name="Hall 1")[0], name="A"
        )[0]
    )


class VendorFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Vendor
        django_get_or_create = ("name",)

    name = "NVIDIA"
    slug = factory.LazyAttribute(lambda o: o.name.lower())


def twin_dr4_model(vendor: str = "NVIDIA", part: str = "MMS4X00-NM", **kw) -> TransceiverModel:
    defaults = dict(
        form_factor=FormFactor.OSFP,
        pmd="400GBASE-DR4",
        speed_gbps=800,
        lanes=8,
        lane_rate_gbps=100,
        logical_ports=2,
        connector_type=ConnectorType.MPO,
        connector_count=2,
        fibre_count=12,
        polish=Polish.APC,
        pinned=True,
        wavelength_nm=1310,
        single_mode=True,
        reach_m=500,
    )
    defaults.update(kw)
    return TransceiverModel.objects.get_or_create(
        vendor=VendorFactory(name=vendor), part_number=part, defaults=defaults
    )[0]


_serial = iter(range(1, 10**9))


def module(model: TransceiverModel | None = None, serial: str | None = None) -> Transceiver:
    model = model or twin_dr4_model()
    return Transceiver.objects.create(
        model=model, serial=serial or f"MT{next(_serial):08d}", status=TransceiverStatus.SPARE
    )


def alias(port: Port, name: str, source: str = "canonical") -> PortAlias:
    return PortAlias.objects.create(port=port, device=port.device, name=name, source=source)


def port(device: Device, name: str, **kw) -> Port:
    p = Port.objects.create(device=device, name=name, **kw)
    alias(p, name)
    return p


def free_port_devices(names: list[str], n: int) -> list[Device]:
    """Devices with ``n`` free RJ45 ports each (``p0`` ...), written in bulk with their canonical
    aliases: room for a large plan import (the benchmark's batches, the query-plan tests)."""
    devices = bulk.bulk_insert(Device, [Device(name=name, role=DeviceRole.OTHER) for name in names])
    rows = [
        [d.pk, f"p{i}", "interface", Fabric.OOB, ConnectorType.RJ45, 1] for d in devices for i in range(n)
    ]
    ids = bulk.bulk_insert_rows(
        Port, ["device_id", "name", "kind", "fabric", "connector_type", "speed_gbps"], rows
    )
    bulk.bulk_insert_rows(
        PortAlias,
        ["port_id", "device_id", "name", "source"],
        [[pid, r[0], r[1], "canonical"] for pid, r in zip(ids, rows, strict=True)],
    )
    return devices


def twin_port_device(
    name: str,
    *,
    rack: Rack | None = None,
    u: int = 1,
    role: str = DeviceRole.LEAF,
    cages: int = 2,
    names=lambda c, k: f"Ethernet{c + 1}/{k + 1}",
    with_modules: bool = True,
) -> tuple[Device, list[Port]]:
    """A device with ``cages`` twin-port OSFP cages (two 400G logical ports each)."""
    dev = Device.objects.create(name=name, role=role, rack=rack or RackFactory(), position_u=u)
    ports = []
    for c in range(cages):
        cage = Cage.objects.create(device=dev, name=f"OSFP{c + 1}", index=c + 1, form_factor=FormFactor.OSFP)
        if with_modules:
            xcvr_services.transceiver_install(transceiver=module(), cage=cage)
        for k in range(2):
            ports.append(
                port(
                    dev,
                    names(c, k),
                    cage=cage,
                    connector=k + 1,
                    lane_start=4 * k,
                    lane_count=4,
                    speed_gbps=400,
                )
            )
    return dev, ports


def patch_panel(name: str, *, rack: Rack | None = None, u: int = 40, rears: int = 1, positions: int = 12):
    """A pass-through MPO panel: front ``i`` maps to rear ``i // positions`` position ``i % positions + 1``."""
    dev = Device.objects.create(
        name=name, role=DeviceRole.PATCH_PANEL, rack=rack or RackFactory(), position_u=u
    )
    mpo = dict(connector_type=ConnectorType.MPO, pinned=True, polish=Polish.APC)
    rear_ports = [
        port(dev, f"Rear {r + 1}", kind=PortKind.REAR, positions=positions, fibre_count=24, **mpo)
        for r in range(rears)
    ]
    fronts = []
    for r, rear in enumerate(rear_ports):
        for pos in range(positions):
            f = port(dev, f"Front {r * positions + pos + 1}", kind=PortKind.FRONT, fibre_count=12, **mpo)
            PortMapping.objects.create(front_port=f, rear_port=rear, rear_position=pos + 1)
            fronts.append(f)
    return dev, rear_ports, fronts


MPO_APC = dict(connector_type=ConnectorType.MPO, fibre_count=12, pinned=False, polish=Polish.APC)


def mpo_end(p: Port, **kw) -> cable_services.EndSpec:
    return cable_services.EndSpec(port=p, **{**MPO_APC, **kw})


def jumper(label: str, a: Port, b: Port, polarity: str = Polarity.B, **kw):
    cable, _ = cable_services.cable_install(
        label=label, kind=CableKind.SMF_OS2, a=mpo_end(a), b=[mpo_end(b)], polarity=polarity, **kw
    )
    return cable


def trunk(label: str, a: Port, b: Port, polarity: str = Polarity.B):
    cable, _ = cable_services.cable_install(
        label=label,
        kind=CableKind.SMF_OS2,
        role="trunk",
        a=mpo_end(a, fibre_count=24),
        b=[mpo_end(b, fibre_count=24)],
        polarity=polarity,
    )
    return cable


# --- telemetry (ingest) ---------------------------------------------------------------------


def api_token_client(user, kind: str = "full"):
    """An APIClient authenticating with a fresh bearer token of ``kind`` for ``user``."""
    from rest_framework.test import APIClient

    from inventory.models import ApiToken
    from inventory.models.accounts import hash_token

    raw = ApiToken.generate()
    ApiToken.objects.create(
        user=user, name=f"{kind} token", kind=kind, key_hash=hash_token(raw), prefix=raw[:8]
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def telemetry_sample(device: str, port: str, ts, **fields) -> dict:
    """One item of a ``{"samples": [...]}`` telemetry batch."""
    return {
        "device": device,
        "port": port,
        "ts": ts.isoformat() if hasattr(ts, "isoformat") else ts,
        **fields,
    }


# --- telemetry rollups and alerts (rules helper) ---------------------------------------------

LINE_BITS_400G = 4 * 106.25e9  # per second: 4 lanes x 106.25 Gb/s


def rollup_rows(
    port: Port | int,
    start,
    minutes: int,
    *,
    ber: float = 5e-9,
    rx_dbm: float = -2.0,
    tx_dbm: float = 1.0,
    **fields,
) -> list:
    """``minutes`` one-minute ``PortRollup`` rows for a healthy 400G receiver (unsaved).

    Healthy means pre-FEC BER ``ber`` (5e-9: thousands of corrected codewords per second),
    no uncorrectables, no tail, no flaps. ``fields`` override any column on every row.
    ``port`` is a port or its id.
    """
    from datetime import timedelta

    from django.utils import timezone

    from inventory.models import PortRollup

    out = []
    for m in range(minutes):
        line = LINE_BITS_400G * 60
        bits = int(ber * line)
        row = dict(
            port_id=getattr(port, "pk", port),
            bucket=start + timedelta(minutes=m),
            seconds=60,
            samples=6,
            covered_s=60.0,
            fec_corrected_cw=int(bits / 1.2),
            fec_uncorrectable_cw=0,
            fec_corrected_bits=bits,
            line_bits=line,
            pre_fec_ber=bits / line,
            hist_cw_warn=0,
            hist_cw_crit=0,
            fec_correction_limit=15,
            pfc_pause_rx=0,
            pfc_pause_tx=0,
            pfc_pause_duration_us=0,
            link_down_events=0,
            link_error_recovery=0,
            rx_power_min_dbm=[rx_dbm] * 4,
            tx_power_min_dbm=[tx_dbm] * 4,
            rx_power_min_any_dbm=rx_dbm,
            temperature_max_c=45.0,
            computed_at=timezone.now(),
        )
        row.update(fields)
        out.append(PortRollup(**row))
    return out


def rollups(port: Port, start, minutes: int, **kw) -> None:
    from inventory.models import PortRollup

    PortRollup.objects.bulk_create(rollup_rows(port, start, minutes, **kw))


def seen(
    port: Port,
    when,
    *,
    serial: str = "",
    neighbor: Port | None = None,
    neighbor_name: str = "",
    rx_low_warn_dbm: float | None = None,
) -> None:
    """What telemetry last reported about a port's module and neighbour."""
    from inventory.models import PortTelemetryState

    ndev, nport = (neighbor.device.name, neighbor.name) if neighbor else ("", "")
    if neighbor_name:
        ndev, nport = neighbor_name.split(":", 1)
    PortTelemetryState.objects.update_or_create(
        port=port,
        defaults=dict(
            last_ts=when,
            identity_seen_at=when,
            module_serial=serial,
            neighbor_device=ndev,
            neighbor_port=nport,
            rx_power_low_warn_dbm=rx_low_warn_dbm,
        ),
    )


# --- labels ------------------------------------------------------------------------------------


def breakout(label: str, a: Port, legs: list[Port], **kw):
    """A breakout cable: one MPO end at ``a``, one leg per port in ``legs`` (labels ``<label>-N``)."""
    cable, _ = cable_services.cable_install(
        label=label, kind=CableKind.SMF_OS2, a=mpo_end(a), b=[mpo_end(p) for p in legs], **kw
    )
    return cable


def cable_test(cable, *, verdict: str, tested_at, kind: str = "olts", **kw):
    """A test as the services record one: with the cable's latest tests kept."""
    from inventory.models import CableTest
    from inventory.services.testing.latest_table import cable_test_latest_refresh

    test = CableTest.objects.create(cable=cable, kind=kind, verdict=verdict, tested_at=tested_at, **kw)
    cable_test_latest_refresh(cable_ids=[cable.pk])
    return test


# --- Retests: teams, owned racks and tested cables --------------------------------------------


def person(username: str, email: str | None = None, **kw):
    user = UserFactory(username=username, **kw)
    if email is not None or not user.email:
        user.email = email if email is not None else f"{username}@example.net"
        user.save(update_fields=["email"])
    return user


def team(name: str, *, email: str = "", lead=None, members=()):
    from inventory.models import Team

    t = Team.objects.create(name=name, email=email, lead=lead)
    t.members.set(members)
    return t


def record_test(cable, *, at, verdict="pass", kind=None):
    """A test result on a cable (what counts for its medium unless ``kind`` says otherwise)."""
    from inventory.models import CableTest
    from inventory.services.testing.latest_table import cable_test_latest_refresh

    if kind is None:
        kind = "qualification" if cable.kind in CableKind.sealed() else "olts"
    test = CableTest.objects.create(cable=cable, kind=kind, verdict=verdict, tested_at=at)
    cable_test_latest_refresh(cable_ids=[cable.pk])
    return test


def forecast_fleet(
    *,
    now,
    cohorts: list[dict],
    site_name: str = "Hall Test",
    device_name: str = "fleet-sw-01",
) -> dict:
    """A fleet for the forecast, written in bulk: per cohort ``n`` modules installed ``years``
    before ``now``, of which ``failed`` ended their placement failed (and left the cage).

    A cohort: ``{"vendor": "A", "part": "P-1", "date_code": "240315", "n": 300, "failed": 3,
    "years": 2.0}``. Returns the site, the device and {cohort index: [transceiver ids]}.
    """
    from datetime import timedelta

    from inventory.core.choices import PlacementEnd
    from inventory.db import bulk
    from inventory.models import TransceiverPlacement

    site = SiteFactory(name=site_name)
    room, _ = Room.objects.get_or_create(site=site, name="Hall 1")
    row, _ = Row.objects.get_or_create(room=room, name="F")
    rack = RackFactory(name=f"{device_name}-rack", row=row)
    dev = Device.objects.create(name=device_name, role=DeviceRole.LEAF, rack=rack, position_u=1)
    total = sum(c["n"] for c in cohorts)
    cages = bulk.bulk_insert(
        Cage,
        [
            Cage(device=dev, name=f"OSFP{i + 1}", index=i + 1, form_factor=FormFactor.OSFP)
            for i in range(total)
        ],
    )
    out, i = {}, 0
    for ci, c in enumerate(cohorts):
        model = twin_dr4_model(vendor=c["vendor"], part=c["part"])
        installed_at = now - timedelta(days=365.0 * c.get("years", 1.0))
        rows, place = [], []
        for k in range(c["n"]):
            failed = k < c.get("failed", 0)
            cage = cages[i]
            i += 1
            rows.append(
                [
                    model.pk,
                    f"{c['vendor'][:2].upper()}{ci:02d}{k:06d}",
                    c.get("date_code", ""),
                    TransceiverStatus.FAILED if failed else TransceiverStatus.INSTALLED,
                    None if failed else cage.pk,
                ]
            )
            place.append((cage.pk, failed))
        ids = bulk.bulk_insert_rows(
            Transceiver, ["model_id", "serial", "date_code", "status", "cage_id"], rows, now=now
        )
        bulk.bulk_insert_rows(
            TransceiverPlacement,
            ["transceiver_id", "cage_id", "installed_at", "removed_at", "end_reason"],
            [
                [
                    tid,
                    cage_id,
                    installed_at,
                    now - timedelta(days=10) if failed else None,
                    PlacementEnd.FAILED if failed else "",
                ]
                for tid, (cage_id, failed) in zip(ids, place, strict=True)
            ],
            now=now,
        )
        out[ci] = ids
    return {"site": site, "device": dev, "ids": out}


def two_team_retest_plant(prefix: str, t0) -> None:
    """Two racks, one per team (Team A: alice, bob, lead lena, mailbox a@; Team B: carol,
    mailbox b@), with jumpers tested at ``t0`` and around it, so a retest sweep at ``t0 + 90
    days`` has digests for six recipients. Rack names are ``R-<prefix>A`` and ``R-<prefix>B``."""
    from datetime import timedelta

    alice, bob, lena, carol = (person(n) for n in ("alice", "bob", "lena", "carol"))
    team_a = team("Team A", email="a@example.net", lead=lena, members=[alice, bob])
    team_b = team("Team B", email="b@example.net", members=[carol])
    for rack_name, owner, tested in (
        (
            f"R-{prefix}A",
            team_a,
            [t0, t0 + timedelta(days=1), t0 - timedelta(days=8), t0 - timedelta(days=20)],
        ),
        (f"R-{prefix}B", team_b, [t0, t0 + timedelta(days=1)]),
    ):
        rack = RackFactory(name=rack_name)
        rack.team = owner
        rack.save()
        _, a = twin_port_device(f"gpu-{rack_name}", rack=rack, u=2, role="gpu_node", cages=2)
        _, b = twin_port_device(f"leaf-{rack_name}", rack=rack, u=40, cages=2)
        for i, at in enumerate(tested):
            cable = jumper(f"J-{rack_name}-{i}", a[i], b[i], install_date=t0.date())
            record_test(cable, at=at)


def production_jumper_pair() -> None:
    """``gpu-r`` eth0/eth1 to ``leaf-r`` Ethernet1/1 and 1/2 by jumpers J-R0 and J-R1, in
    production: the two links the telemetry replay tests feed."""
    from inventory.core.choices import CableStatus

    _, gpu = twin_port_device("gpu-r", role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}")
    _, leaf = twin_port_device("leaf-r", u=30)
    for label, a, b in (("J-R0", gpu[0], leaf[0]), ("J-R1", gpu[1], leaf[1])):
        c = jumper(label, a, b)
        c.status = CableStatus.IN_PRODUCTION
        c.save()


def admin_post_data(response) -> dict:
    """The admin change form as it was rendered (its fields and inline formsets), to post back."""
    data = {}
    forms = [response.context["adminform"].form]
    for inline in response.context["inline_admin_formsets"]:
        formset = inline.formset
        forms += [formset.management_form, *formset.forms]
    for form in forms:
        for name in form.fields:
            value = form[name].value()
            key = form.add_prefix(name)
            if value is None or value is False:
                continue
            data[key] = [str(v) for v in value] if isinstance(value, list | tuple) else str(value)
    return data
