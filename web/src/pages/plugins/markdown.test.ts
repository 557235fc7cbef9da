import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { Markdown } from "./Markdown";

const render = (source: string) => renderToStaticMarkup(createElement(Markdown, { source }));

describe("readme Markdown subset", () => {
  it("draws headings, lists, code and inline marks", () => {
    const html = render("# Title\n\nSome **bold**, *em* and `code`.\n\n- one\n- two\n\n1. first\n2. second\n\n```\nx < y\n```");
    expect(html).toContain("<h3>Title</h3>");
    expect(html).toContain("<strong>bold</strong>");
    expect(html).toContain("<em>em</em>");
    expect(html).toContain("<code>code</code>");
    expect(html).toContain("<ul><li>one</li><li>two</li></ul>");
    expect(html).toContain("<ol><li>first</li><li>second</li></ol>");
    expect(html).toContain("<pre><code>x &lt; y</code></pre>");
  });

  it("never turns the readme's text into markup", () => {
    const html = render('<script>alert(1)</script> <img src=x onerror="alert(2)">\n\n[x](javascript:alert(3))');
    expect(html).not.toContain("<script");
    expect(html).not.toContain("<img");
    expect(html).not.toContain('href="javascript');
    expect(html).toContain("&lt;script&gt;");
  });

  it("links only http(s) targets, opened without the opener", () => {
    const html = render("See [the docs](https://example.org/a).");
    expect(html).toContain('<a href="https://example.org/a" target="_blank" rel="noopener noreferrer nofollow">the docs</a>');
  });

  it("keeps a line of seven hashes as text", () => {
    expect(render("####### not a heading")).toBe('<div class="markdown"><p>####### not a heading</p></div>');
  });
});
