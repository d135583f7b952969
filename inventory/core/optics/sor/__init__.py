"""Bellcore/Telcordia SR-4731 OTDR files (``.sor``), versions 1 and 2. Pure code: no ORM.

* :func:`sniff` looks at the first bytes and the block map and says, in words a technician
  understands, why a file is not a readable SOR (an HTML page saved under a .sor name, a
  truncated copy, a file over the size cap, something else entirely).
* Version 2 files are parsed by ``otdrs`` (LGPL-3.0, Rust); ``otdrs`` cannot read version 1,
  so a small reader of our own (:mod:`.v1`) handles those.
* The CRC-16 is checked under the conventions real instruments write (which bytes it covers,
  start value, byte order; the table is in :mod:`.checksum`): a match is "verified"; EXFO and
  OptixS, whose convention nothing reproduces, and files that store 0000 are "not checked" (no
  warning); anything else is a mismatch *warning*, never a refusal.
* A trace-only file (no KeyEvents block) is read: its trace, no events. A GenParams language code
  that is not text is set aside when the rest of the file reads.
* The KeyEvents summary gives the fibre-start offset (a launch lead) and the fibre length.
* Parsed values are sanity-checked: a mutated file that still "parses" but says the fibre has
  an index of refraction of 40 is refused with that reason.

Units in the file: times of flight in 100 ps (one way, as the distance formula of SR-4731
uses them: ``d = t * c / n``), losses and reflectances in 0.001 dB, index of refraction
x 100000, wavelengths in 0.1 nm (some instruments write whole nanometres; normalised here),
data spacing in 100 ps per 10,000 points.

Layout: ``data`` (what a parsed file holds, ``SorError``), ``sniff`` (is it a SOR at all, the block
map), ``checksum``, ``fields`` (byte reader, units, key events), ``trace``, ``v1`` (our reader),
``v2`` (through otdrs) and ``parse`` (``parse_sor``: all of the above, then sanity checks).
"""
