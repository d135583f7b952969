"""The pieces every mail is built from: a subject cut at a word, and the closing "why" line."""

from inventory.core.mail import Addressee, mail_subject, why_line


def test_a_subject_past_200_characters_ends_with_a_whole_word_and_an_ellipsis():
    words = "word " * 60  # 300 characters
    subject = mail_subject(f"[cabletrack] {words}")
    assert len(subject) <= 200 and subject.endswith(" word…")
    assert mail_subject("short\r\nsubject") == "short subject"  # one line, as before


def test_a_subject_never_ends_on_an_opening_bracket_or_a_comma():
    text = "x" * 190 + " a, (leaf-07 Ethernet1/7)"
    assert mail_subject(text) == "x" * 190 + " a…"


def test_one_reader_reads_all_their_reasons_several_readers_each_reason():
    lead = [Addressee("lena@x", "are on team A"), Addressee("lena@x", "lead team A")]
    assert why_line(lead) == "You get this mail because you are on team A; and because you lead team A."
    two = [Addressee("a@x", "are an engineer"), Addressee("b@x", "drained this link")]
    assert why_line(two) == "You get this mail because you are an engineer; or because you drained this link."
    assert why_line([]) == ""
