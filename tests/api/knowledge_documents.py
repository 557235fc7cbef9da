"""Real documents for the knowledge-base tests, built as bytes (Python 3 standard library only).

    pdf = make_pdf(["First page text", "Second page\\nwith two lines"])
    docx = make_docx(["A paragraph.", "Another one."])
    html = make_html("Title", ["Para & more"]); md = make_markdown("Title", ["Para"])
    bomb = zip_bomb_docx(inflated_mb=256)    # ~260 KB on disk, 256 MiB once inflated

Well-formed: make_pdf (PDF 1.4, Helvetica, one BT/Tj/ET block per page, exact xref), make_docx
(the three parts Word needs), make_html, make_markdown, make_text. Hostile or broken:
corrupt_pdf, looping_pdf, truncated_pdf, zip_bomb_docx, docx_without_document, corrupt_docx.
Its self-test is tests/fakes/test_knowledge_documents.py (every tests/api/test_*.py is an
end-to-end test of the server).
"""

import html as htmllib
import io
import zipfile
import zlib

PDF_LINE_CHARS = 80  # Helvetica 11 pt: about this many characters fit between the margins
PDF_MARGIN_TOP = 742
PDF_LEADING = 14
PDF_MAX_LINES = 50  # from y=742 down to the bottom margin, 14 pt apart
DOCX_MIME = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
# Words that make_html(noise=True) hides in <script>, <style> and a comment: text extraction must
# not return them.
HTML_NOISE_MARKERS = ("SCRIPTNOISE", "STYLENOISE", "COMMENTNOISE")


# ---------------------------------------------------------------------------------------------
# PDF


def pdf_string(text):
    """A PDF literal string for WinAnsi-encoded Helvetica: ( ) \\ escaped, bytes past ASCII as
    octal escapes. Raises ValueError for characters WinAnsi cannot encode (CJK needs CID fonts,
    which these tests do not build)."""
    out = bytearray(b"(")
    for byte in text.encode("cp1252"):
        ch = bytes([byte])
        if ch in b"()\\":
            out += b"\\" + ch
        elif 32 <= byte < 127:
            out += ch
        else:
            out += b"\\%03o" % byte
    return bytes(out + b")")


def _wrap(line, width):
    out, cur = [], ""
    for word in line.split():
        while len(word) > width:  # one unbreakable run: cut it
            if cur:
                out.append(cur)
                cur = ""
            out.append(word[:width])
            word = word[width:]
        if cur and len(cur) + 1 + len(word) > width:
            out.append(cur)
            cur = word
        else:
            cur = cur + " " + word if cur else word
    out.append(cur)
    return out


def _page_content(text):
    lines = []
    for line in text.split("\n"):
        lines.extend(_wrap(line, PDF_LINE_CHARS))
    if len(lines) > PDF_MAX_LINES:  # readers drop text below the page's edge
        raise ValueError("a page holds %d lines, this one has %d: split the text over more "
                         "pages" % (PDF_MAX_LINES, len(lines)))
    ops = [b"BT", b"/F1 11 Tf", b"%d TL" % PDF_LEADING, b"72 %d Td" % PDF_MARGIN_TOP]
    for i, line in enumerate(lines):
        ops.append(pdf_string(line) + (b" Tj" if i == 0 else b" '"))  # ' = next line, show
    ops.append(b"ET")
    return b"\n".join(ops) + b"\n"


def _stream(content, compress):
    if compress:
        data = zlib.compress(content, 9)
        return b"<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream" % (len(data), data)
    return b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content)


def assemble_pdf(objects, root=1, trailer_extra=b""):
    """A PDF 1.4 file of `objects` (object 1..n bodies, bytes) with an exact xref table."""
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")  # binary comment: "this file is binary"
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n" % (len(objects) + 1)
    out += b"0000000000 65535 f \n"
    for off in offsets:
        out += b"%010d 00000 n \n" % off  # 20 bytes per entry, as the format requires
    out += b"trailer\n<< /Size %d /Root %d 0 R%s >>\n" % (len(objects) + 1, root, trailer_extra)
    out += b"startxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def make_pdf(pages, compress=False, title=None):
    """A valid PDF 1.4, one page per string in `pages` (\\n starts a line, long lines wrap; at
    most PDF_MAX_LINES lines a page, ValueError beyond).

    Objects: 1 catalog, 2 pages, 3 the Helvetica font, then page and content pairs; with
    `compress` the content streams are FlateDecode. `title` goes into the Info dictionary."""
    if not pages:
        raise ValueError("a PDF needs at least one page")
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", None,
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica "
               b"/Encoding /WinAnsiEncoding >>"]
    kids = []
    for text in pages:
        page_no = len(objects) + 1
        kids.append(b"%d 0 R" % page_no)
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                       b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>"
                       % (page_no + 1))
        objects.append(_stream(_page_content(text), compress))
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(kids), len(pages))
    extra = b""
    if title is not None:
        objects.append(b"<< /Title %s /Producer (switchboard tests) >>" % pdf_string(title))
        extra = b" /Info %d 0 R" % len(objects)
    return assemble_pdf(objects, trailer_extra=extra)


def corrupt_pdf():
    """A PDF header followed by noise: no objects, no xref, no trailer; no reader can open it."""
    noise = bytes((i * 73 + 41) % 256 for i in range(4096)).replace(b"obj", b"ojb")
    return b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n" + noise + b"\n%%EOF\n"


def truncated_pdf(pages=("Truncated document text",)):
    """A valid PDF cut off half way (the upload was interrupted). Readers may recover what is
    left or refuse it; either way never crash."""
    whole = make_pdf(list(pages))
    return whole[:len(whole) // 2]


def looping_pdf():
    """A page tree whose Pages node lists itself as its only kid (a reader that follows Kids
    without remembering where it has been never stops)."""
    return assemble_pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [2 0 R] /Count 1 >>",
    ])


# ---------------------------------------------------------------------------------------------
# DOCX

_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
    'relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-'
    'officedocument.wordprocessingml.document.main+xml"/>'
    '</Types>')
_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
    'relationships/officeDocument" Target="word/document.xml"/>'
    '</Relationships>')
_DOC_HEAD = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
             '<w:document xmlns:w="%s"><w:body>' % W_NS)
_DOC_TAIL = '<w:sectPr/></w:body></w:document>'


def _xml_text(text):
    return htmllib.escape(text, quote=False)


def _run(text):
    """One w:r: tabs become w:tab and newlines w:br, as Word writes them."""
    parts = []
    for i, line in enumerate(text.split("\n")):
        if i:
            parts.append("<w:br/>")
        for j, piece in enumerate(line.split("\t")):
            if j:
                parts.append("<w:tab/>")
            if piece:
                parts.append('<w:t xml:space="preserve">%s</w:t>' % _xml_text(piece))
    return "<w:r>%s</w:r>" % "".join(parts)


def docx_paragraph(text, split_runs=False, style=None):
    """A w:p. split_runs cuts the text into three runs mid-word, as Word does after editing or
    spell checking: an extractor must join runs without adding spaces."""
    ppr = '<w:pPr><w:pStyle w:val="%s"/></w:pPr>' % style if style else ""
    if split_runs and len(text) >= 3:
        a, b = len(text) // 3, 2 * len(text) // 3
        runs = "".join(_run(p) for p in (text[:a], text[a:b], text[b:]))
    else:
        runs = _run(text)
    return "<w:p>%s%s</w:p>" % (ppr, runs)


def _zip(parts):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in parts:
            zf.writestr(name, data)
    return buf.getvalue()


def make_docx(paragraphs, split_runs=False, headings=()):
    """A DOCX (zip of [Content_Types].xml, _rels/.rels, word/document.xml) with one w:p per
    paragraph; indexes listed in `headings` get the Heading1 style."""
    body = "".join(docx_paragraph(p, split_runs, "Heading1" if i in headings else None)
                   for i, p in enumerate(paragraphs))
    return _zip([("[Content_Types].xml", _CONTENT_TYPES), ("_rels/.rels", _RELS),
                 ("word/document.xml", _DOC_HEAD + body + _DOC_TAIL)])


def docx_without_document():
    """A DOCX whose package points at word/document.xml, which is missing."""
    return _zip([("[Content_Types].xml", _CONTENT_TYPES), ("_rels/.rels", _RELS),
                 ("word/styles.xml", '<?xml version="1.0"?><w:styles xmlns:w="%s"/>' % W_NS)])


def corrupt_docx():
    """Not a zip at all, though named .docx."""
    return b"PK\x03\x04" + bytes((i * 31 + 7) % 256 for i in range(2048))


def _bomb_chunks(inflated_bytes, chunk_bytes=1 << 20):
    """word/document.xml of `inflated_bytes`: well-formed, one long paragraph of repeated words
    (repetition compresses about 1000:1 with deflate)."""
    tail = "</w:t></w:r></w:p>" + _DOC_TAIL
    head = _DOC_HEAD + '<w:p><w:r><w:t xml:space="preserve">'
    yield head.encode()
    filler = (b"bomb " * (chunk_bytes // 5 + 1))[:chunk_bytes]
    left = inflated_bytes - len(head) - len(tail)
    while left > 0:
        piece = filler[:min(left, chunk_bytes)]
        yield piece
        left -= len(piece)
    yield tail.encode()


def zip_bomb_docx(inflated_mb=256, declared_size=None):
    """A small DOCX whose word/document.xml inflates to `inflated_mb` MiB, written chunk by chunk
    so neither this process nor the file ever holds the inflated text. The zip's headers declare
    the true size unless `declared_size` (bytes) is given: then the local header and the central
    directory both claim that size, to catch a reader that trusts the declaration."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr("[Content_Types].xml", _CONTENT_TYPES)
        zf.writestr("_rels/.rels", _RELS)
        with zf.open("word/document.xml", "w", force_zip64=inflated_mb >= 4000) as f:
            for chunk in _bomb_chunks(inflated_mb << 20):
                f.write(chunk)
    data = bytearray(buf.getvalue())
    if declared_size is not None:
        _declare_size(data, "word/document.xml", declared_size)
    return bytes(data)


def _declare_size(data, name, size):
    """Rewrites the uncompressed size of `name` in its local header and central directory."""
    info = zipfile.ZipFile(io.BytesIO(bytes(data))).getinfo(name)
    local = info.header_offset
    assert data[local:local + 4] == b"PK\x03\x04"
    data[local + 22:local + 26] = size.to_bytes(4, "little")
    raw_name = name.encode()
    pos = data.find(b"PK\x01\x02")
    while pos >= 0:
        name_len = int.from_bytes(data[pos + 28:pos + 30], "little")
        if bytes(data[pos + 46:pos + 46 + name_len]) == raw_name:
            data[pos + 24:pos + 28] = size.to_bytes(4, "little")
            return
        pos = data.find(b"PK\x01\x02", pos + 4)
    raise AssertionError("no central directory entry for " + name)


# ---------------------------------------------------------------------------------------------
# HTML, Markdown, plain text


def make_html(title, paragraphs, noise=False):
    """An HTML5 page: <title>, an <h1> with the title, one <p> per paragraph (escaped, so `&`
    arrives as &amp;). noise adds a <script>, a <style> and a comment holding
    HTML_NOISE_MARKERS, none of which is document text."""
    head = ['<meta charset="utf-8">', "<title>%s</title>" % htmllib.escape(title)]
    body = ["<h1>%s</h1>" % htmllib.escape(title)]
    if noise:
        head.append("<style>.STYLENOISE { color: red; }</style>")
        head.append("<script>var x = 'SCRIPTNOISE';</script>")
        body.append("<!-- COMMENTNOISE -->")
    body.extend("<p>%s</p>" % htmllib.escape(p).replace("\n", "<br>") for p in paragraphs)
    page = ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n%s\n</head>\n<body>\n%s\n</body>\n"
            "</html>\n" % ("\n".join(head), "\n".join(body)))
    return page.encode("utf-8")


def make_markdown(title, paragraphs, sections=()):
    """"# title", the paragraphs, then each (heading, [paragraphs]) of `sections` under "## "."""
    parts = ["# " + title] + list(paragraphs)
    for heading, paras in sections:
        parts.append("## " + heading)
        parts.extend(paras)
    return ("\n\n".join(parts) + "\n").encode("utf-8")


def make_text(paragraphs):
    """Plain UTF-8 text, paragraphs separated by a blank line."""
    return ("\n\n".join(paragraphs) + "\n").encode("utf-8")
