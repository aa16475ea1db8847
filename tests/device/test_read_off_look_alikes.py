"""OCR's look-alikes are folded to match the names the phone knows, never to make two plain words one. OCR
reads a capital I, a 1, a stroke or a dotless ı where the pixels show an i or an l (sans-serif draws them
alike): such a character matches either letter of a name. A plain i and a plain l are read as they are: on
main both were folded to one letter, so a saved network "Mall" withheld every screen saying "Mail", and one
called "Lime" every screen saying "time" was spared only by the t."""

from __future__ import annotations

import pytest

from device_tools.network_names import folded
from device_tools.read_off_names import shows_read_off

NAMES = ["Mall", "Villa Kunterbunt", "Filiale Nord", "HomeNet 5G", "Wi-Fi Gast Linde", "Net11", "Hall"]


@pytest.mark.parametrize("honest", [
    "New Mail (3)",  # "Mail" is not the network "Mall"
    "Mail",
    "Villa Kunterbunt".replace("ll", "ii"),  # "Viiia": plain letters, not the name
    "Filial Nord-West",  # a part of a name is not the name (nor is "Filial" the name's "Filiale")
    "Wi-Fi Gast Linie",
    "Hail warning for Tuesday",
])
def test_an_honest_word_that_differs_by_an_i_or_an_l_is_not_a_name(honest):
    assert not shows_read_off(honest, [folded(n) for n in NAMES])


@pytest.mark.parametrize("spelled", [
    "Mall", "MALL", "MaIl", "Ma1l", "MaII", "Maıl",  # the name, and I, 1 and ı for its l
    "VIlla Kunterbunt", "ViIIa Kunterbunt", "Vi11a Kunterbunt", "V1lla Kunterbunt",  # for its i and its l
    "Vi||a Kunterbunt", "V!lla Kunter-\nbunt",  # strokes, in a name long enough to be read as a run
    "Fi1iaIe Nord", "FILIALE NORD", "F1l1ale Nord",
    "HomeNet 5G", "H0meNet SG",  # the other look-alikes, as before
    "W1-F1 Gast L1nde", "Wi-Fi Gast Iinde",
    "Net11", "NetII", "Netll", "Net1l",
])
def test_a_look_alike_spelling_of_a_name_is_still_the_name(spelled):
    assert shows_read_off(f"Connected to {spelled}", [folded(n) for n in NAMES]), spelled
    assert shows_read_off(spelled, [folded(n) for n in NAMES]), spelled
