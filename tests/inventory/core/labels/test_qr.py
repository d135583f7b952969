"""The fast QR path is qrcode's encoder, module for module, and a real decoder reads it."""

import numpy as np
import pytest
import zxingcpp
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from inventory.core.labels.qr import qr_matrix, qr_reference, version_for


@settings(max_examples=150, deadline=None)
@given(
    data=st.text(min_size=0, max_size=200),
    ec=st.sampled_from("LMQH"),
    mask=st.integers(min_value=0, max_value=7),
)
def test_fast_matrix_equals_qrcode(data, ec, mask):
    assert np.array_equal(qr_matrix(data, ec_level=ec, mask=mask), qr_reference(data, ec_level=ec, mask=mask))


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/c/C000001",
        "https://cabletrack.example.com/c/SPINE-01%2FTRUNK-0042_%C3%A9",
        "https://cabletrack.example.com/r/" + "R" * 150,
    ],
)
def test_zxing_reads_the_fast_matrix_at_level_q(url):
    m = qr_matrix(url, ec_level="Q")
    img = Image.fromarray(np.pad((1 - m) * 255, 4, constant_values=255).astype(np.uint8)).resize(
        ((m.shape[0] + 8) * 6,) * 2, Image.NEAREST
    )
    [result] = zxingcpp.read_barcodes(img)
    assert result.text == url
    assert result.ec_level == "Q"


def test_version_grows_with_the_data():
    assert version_for(31, "Q") == 3
    assert version_for(40, "Q") == 4
    with pytest.raises(ValueError, match="do not fit"):
        version_for(5000, "H")
