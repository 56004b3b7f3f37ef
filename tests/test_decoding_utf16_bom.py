"""Tests of decoding.py: UTF-16 with a BOM, stray BOM bytes before UTF-8.

Session 12: a UTF-16 file with a BOM whose text is mostly CJK has few zero bytes, yet is UTF-16 (its bytes are no
UTF-8); two stray BOM bytes before a UTF-8 log still read as UTF-8."""
from forensics.decoding import decode_text


CHINESE_LOG = "步骤 10：损失 2.345，学习率 0.0001\n训练完成，保存检查点\n" * 20


def test_a_utf16_file_of_chinese_text_with_a_bom_is_read_as_utf16():
    for encoding in ("utf-16", "utf-16-le", "utf-16-be"):
        data = CHINESE_LOG.encode(encoding)
        if encoding != "utf-16":  # the explicit-endian codecs write no BOM: put it there as an editor would
            data = ("\ufeff" + CHINESE_LOG).encode(encoding)
        text, note = decode_text(data)
        assert text.lstrip("\ufeff") == CHINESE_LOG and note is None


def test_stray_bom_bytes_before_a_utf8_log_still_read_as_utf8():
    text, _ = decode_text(b"\xff\xfe" + "{'loss': 1.5, 'epoch': 0.1}\n".encode("utf-8"))
    assert "{'loss': 1.5, 'epoch': 0.1}" in text
