"""Self-test of tests/api/knowledge_documents.py: the generated documents are what they claim
(valid PDF structure and xref, a DOCX Word would open, a zip bomb that is small on disk and huge
inflated). Standard library only; pdftotext is used when installed.

Run: cd tests/fakes && python3 -m unittest -v test_knowledge_documents
"""

import html.parser
import io
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET
import zipfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
API = os.path.join(HERE, "..", "api")
sys.path.insert(0, API)
import knowledge_documents as kd  # noqa: E402

W = "{%s}" % kd.W_NS
LIMIT = 64 << 20  # DocumentLimits::max_docx_xml_bytes


def pdf_objects(pdf):
    """{number: body bytes} found through the xref table, checking every offset on the way."""
    tc = unittest.TestCase()
    tc.assertTrue(pdf.startswith(b"%PDF-1.4\n"))
    tc.assertTrue(pdf.endswith(b"%%EOF\n"))
    m = re.search(rb"startxref\n(\d+)\n%%EOF\n$", pdf)
    tc.assertIsNotNone(m, "no startxref")
    xref = int(m.group(1))
    tc.assertEqual(pdf[xref:xref + 5], b"xref\n")
    lines = pdf[xref:].split(b"\n")
    first, count = map(int, lines[1].split())
    tc.assertEqual(first, 0)
    entries = pdf[xref + len(lines[0]) + len(lines[1]) + 2:][:20 * count]
    tc.assertEqual(entries[:20], b"0000000000 65535 f \n")
    trailer = pdf[xref + len(lines[0]) + len(lines[1]) + 2 + 20 * count:]
    tc.assertTrue(trailer.startswith(b"trailer\n<< /Size %d " % count), trailer[:40])
    objects = {}
    for n in range(1, count):
        entry = entries[20 * n:20 * n + 20]
        tc.assertRegex(entry, rb"^\d{10} 00000 n \n$")
        off = int(entry[:10])
        header = b"%d 0 obj\n" % n
        tc.assertEqual(pdf[off:off + len(header)], header, "xref entry %d" % n)
        end = pdf.index(b"\nendobj\n", off)
        objects[n] = pdf[off + len(header):end]
    return objects


def stream_data(body):
    m = re.match(rb"<< /Length (\d+)( /Filter /FlateDecode)? >>\nstream\n", body)
    assert m, body[:60]
    n = int(m.group(1))
    data = body[m.end():m.end() + n]
    assert body[m.end() + n:] == b"\nendstream", "Length is not exact"
    return zlib.decompress(data) if m.group(2) else data


def docx_paragraphs(data):
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        root = ET.fromstring(zf.read("word/document.xml"))
    out = []
    for p in root.iter(W + "p"):
        text = []
        for el in p.iter():
            if el.tag == W + "t":
                text.append(el.text or "")
            elif el.tag == W + "tab":
                text.append("\t")
            elif el.tag == W + "br":
                text.append("\n")
        out.append("".join(text))
    return out


class PdfTest(unittest.TestCase):
    PAGES = ["First page: the refund policy (30 days) \\ backslash.",
             "Second page\nhas two lines, café and naïve.",
             "Third page " + "word " * 60]

    def test_structure_and_text(self):
        for compress in (False, True):
            pdf = kd.make_pdf(self.PAGES, compress=compress, title="Manual (v2)")
            objs = pdf_objects(pdf)
            self.assertEqual(objs[1], b"<< /Type /Catalog /Pages 2 0 R >>")
            self.assertEqual(objs[2], b"<< /Type /Pages /Kids [4 0 R 6 0 R 8 0 R] /Count 3 >>")
            self.assertIn(b"/BaseFont /Helvetica", objs[3])
            self.assertIn(b"/Info 10 0 R", pdf)
            self.assertIn(b"/Title (Manual \\(v2\\))", objs[10])
            for i in range(3):
                self.assertIn(b"/Contents %d 0 R" % (5 + 2 * i), objs[4 + 2 * i])
                content = stream_data(objs[5 + 2 * i])
                self.assertTrue(content.startswith(b"BT\n/F1 11 Tf"))
                self.assertTrue(content.endswith(b"ET\n"))
            first = stream_data(objs[5])
            self.assertIn(b"(First page: the refund policy \\(30 days\\) \\\\ backslash.) Tj",
                          first)
            second = stream_data(objs[7])
            self.assertIn(b"(Second page) Tj\n(has two lines, caf\\351 and na\\357ve.) '", second)
            third = stream_data(objs[9])
            lines = re.findall(rb"\((.*?)\) (?:Tj|')", third)
            self.assertGreater(len(lines), 1)  # wrapped
            self.assertTrue(all(len(x) <= kd.PDF_LINE_CHARS for x in lines))
            self.assertEqual(b" ".join(lines).split(), (b"Third page " + b"word " * 60).split())

    def test_pdf_string_escaping(self):
        self.assertEqual(kd.pdf_string("a(b)c\\d"), b"(a\\(b\\)c\\\\d)")
        self.assertEqual(kd.pdf_string("\u20ac"), b"(\\200)")  # euro sign in WinAnsi
        with self.assertRaises(ValueError):
            kd.pdf_string("中文")
        with self.assertRaises(ValueError):
            kd.make_pdf([])
        kd.make_pdf(["\n".join("line %d" % i for i in range(kd.PDF_MAX_LINES))])
        with self.assertRaises(ValueError):  # would fall off the bottom of the page
            kd.make_pdf(["\n".join("line %d" % i for i in range(kd.PDF_MAX_LINES + 1))])

    @unittest.skipUnless(shutil.which("pdftotext"), "pdftotext (poppler-utils) not installed")
    def test_pdftotext_reads_it(self):
        with tempfile.TemporaryDirectory() as tmp:
            for compress in (False, True):
                path = os.path.join(tmp, "doc.pdf")
                with open(path, "wb") as f:
                    f.write(kd.make_pdf(self.PAGES, compress=compress))
                out = subprocess.run(["pdftotext", path, "-"], capture_output=True, timeout=30,
                                     check=True).stdout.decode("utf-8")
                self.assertIn("the refund policy (30 days) \\ backslash", out)
                self.assertIn("café and naïve", out)
                self.assertEqual(out.count("\f"), 3)

    def test_bad_pdfs(self):
        bad = kd.corrupt_pdf()
        self.assertTrue(bad.startswith(b"%PDF-1.4"))
        for token in (b"xref", b"trailer", b" obj", b"startxref"):
            self.assertNotIn(token, bad)
        loop = pdf_objects(kd.looping_pdf())
        self.assertEqual(loop[2], b"<< /Type /Pages /Kids [2 0 R] /Count 1 >>")
        whole = kd.make_pdf(["Truncated document text"])
        cut = kd.truncated_pdf()
        self.assertTrue(whole.startswith(cut))
        self.assertLess(len(cut), len(whole))
        self.assertNotIn(b"%%EOF", cut)


class DocxTest(unittest.TestCase):
    PARAS = ["Refund policy & <terms>", "A tab\there and a break\nhere.", "中文段落：退款政策。",
             "  leading spaces kept"]

    def test_package_and_paragraphs(self):
        for split in (False, True):
            data = kd.make_docx(self.PARAS, split_runs=split, headings=(0,))
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                self.assertIsNone(zf.testzip())
                self.assertEqual(zf.namelist(), ["[Content_Types].xml", "_rels/.rels",
                                                 "word/document.xml"])
                types = ET.fromstring(zf.read("[Content_Types].xml"))
                rels = ET.fromstring(zf.read("_rels/.rels"))
            overrides = {o.get("PartName"): o.get("ContentType") for o in types}
            self.assertEqual(overrides["/word/document.xml"],
                             kd.DOCX_MIME.replace(".document", ".document.main+xml"))
            self.assertEqual([r.get("Target") for r in rels], ["word/document.xml"])
            self.assertEqual(docx_paragraphs(data), self.PARAS)
        runs = ET.fromstring(zipfile.ZipFile(io.BytesIO(
            kd.make_docx(["abcdefghi"], split_runs=True))).read("word/document.xml"))
        self.assertEqual([t.text for t in runs.iter(W + "t")], ["abc", "def", "ghi"])

    def test_bad_docx(self):
        data = kd.docx_without_document()
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            self.assertNotIn("word/document.xml", zf.namelist())
            self.assertIn(b'Target="word/document.xml"', zf.read("_rels/.rels"))
        self.assertFalse(zipfile.is_zipfile(io.BytesIO(kd.corrupt_docx())))

    def test_zip_bomb_is_small_and_inflates_past_the_limit(self):
        data = kd.zip_bomb_docx(inflated_mb=128)
        self.assertLess(len(data), 512 << 10)
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            info = zf.getinfo("word/document.xml")
            self.assertEqual(info.file_size, 128 << 20)
            self.assertGreater(info.file_size, LIMIT)
            self.assertLess(info.compress_size, 512 << 10)
            total, head = 0, b""
            with zf.open(info) as f:  # inflate it all, 1 MiB at a time; CRC checked at the end
                while True:
                    chunk = f.read(1 << 20)
                    if not chunk:
                        break
                    if not head:
                        head = chunk[:400]
                    total += len(chunk)
                    last = chunk
        self.assertEqual(total, 128 << 20)
        self.assertTrue(head.startswith(b'<?xml version="1.0"'))
        self.assertIn(b"<w:t xml:space=\"preserve\">bomb bomb", head)
        self.assertTrue(last.endswith(b"</w:body></w:document>"))

    def test_lying_zip_bomb(self):
        data = kd.zip_bomb_docx(inflated_mb=80, declared_size=4096)
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            info = zf.getinfo("word/document.xml")
            self.assertEqual(info.file_size, 4096)  # the central directory's claim
            offset = info.header_offset
            self.assertEqual(int.from_bytes(data[offset + 22:offset + 26], "little"), 4096)
            name_len = int.from_bytes(data[offset + 26:offset + 28], "little")
            extra_len = int.from_bytes(data[offset + 28:offset + 30], "little")
            start = offset + 30 + name_len + extra_len
            raw = data[start:start + info.compress_size]
        inflater = zlib.decompressobj(-15)
        total = 0
        while raw:  # what the bytes really inflate to
            total += len(inflater.decompress(raw[:65536], 1 << 20))
            raw = inflater.unconsumed_tail + raw[65536:]
        self.assertEqual(total, 80 << 20)

    def test_bomb_is_written_without_holding_it(self):
        code = ("import sys; sys.path.insert(0, %r); import knowledge_documents as kd; "
                "sys.stdout.write(str(len(kd.zip_bomb_docx(inflated_mb=512))))" % API)
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60,
                             check=True).stdout
        peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        self.assertLess(int(out), 1 << 20)
        # Linux reports KiB. A child that held the 512 MiB text would peak far above this.
        self.assertLess(max(peak_kib, before), 96 << 10)


class _TextOf(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.text, self.hidden, self.skip = [], [], 0

    def handle_starttag(self, tag, attrs):
        self.skip += tag in ("script", "style", "title")

    def handle_endtag(self, tag):
        self.skip -= tag in ("script", "style", "title")

    def handle_data(self, data):
        (self.hidden if self.skip else self.text).append(data)

    def handle_comment(self, data):
        self.hidden.append(data)


class HtmlMarkdownTest(unittest.TestCase):
    def test_html(self):
        page = kd.make_html("Guide <1>", ["Fish & chips", "Line one\nline two", "中文"], noise=True)
        self.assertTrue(page.startswith(b"<!DOCTYPE html>"))
        self.assertIn(b"<title>Guide &lt;1&gt;</title>", page)
        self.assertIn(b"<p>Fish &amp; chips</p>", page)
        parser = _TextOf()
        parser.feed(page.decode("utf-8"))
        visible = "".join(parser.text)
        for want in ("Guide <1>", "Fish & chips", "Line one", "line two", "中文"):
            self.assertIn(want, visible)
        for marker in kd.HTML_NOISE_MARKERS:
            self.assertNotIn(marker, visible)
            self.assertIn(marker, "".join(parser.hidden))
        self.assertNotIn(b"NOISE", kd.make_html("t", ["p"]))

    def test_markdown_and_text(self):
        md = kd.make_markdown("Title", ["Intro **bold**."], sections=[("Part", ["A", "B"])])
        self.assertEqual(md.decode("utf-8"), "# Title\n\nIntro **bold**.\n\n## Part\n\nA\n\nB\n")
        self.assertEqual(kd.make_text(["a", "退款"]), "a\n\n退款\n".encode("utf-8"))


if __name__ == "__main__":
    unittest.main()
