// Satori's message content ("message elements", an XHTML-like syntax: satori.chat protocol/
// message.html and elements.html) to and from the shared message chain. Pure; never fails: text
// that is no well-formed tag is kept as text, as the spec asks for unpaired elements.
//   MessageChain chain = DecodeContent(R"(<at id="42"/> hi &amp; bye<img
//   src="https://x/a.png"/>)"); std::string content = EncodeContent(chain);  // `&`, `<`, `>` and
//   `"` escaped
#pragma once

#include <string>
#include <string_view>

#include "domain/message.hpp"

namespace sb::platforms::satori {

// `&` `<` `>` `"` as &amp; &lt; &gt; &quot; (the four the spec escapes; also safe in attributes
// quoted with ").
std::string Escape(std::string_view text);

// The inverse for the named entities &quot; &amp; &lt; &gt; &apos; and decimal/hex character
// references (&#39; &#x27;). Anything else that starts with `&` stays as written.
std::string Unescape(std::string_view text);

// Message content into a chain (Plain runs merged):
//   <at id/>            At{id}; <at type="all"/> and type="here" AtAll; <at name/> "@name"
//   <sharp id name/>    "#name" (or "#id")
//   <img>/<image>       Image{src}; <audio> Voice{src}; <video>, <file> File{src, title}
//   <quote id>…</quote> Quote{id}; the quoted message inside is left out
//   <author>…</author>  left out (it only names who wrote a forwarded message)
//   <br/>               a line break; </p> and </message> end a line
//   anything else       its text content kept (<b>, <i>, <a>, <code>, <button>, unknown tags)
// Comments (<!-- -->) are dropped; text is unescaped. Elements without the needed attribute
// (an <img> without src) are dropped.
domain::MessageChain DecodeContent(std::string_view content);

// A chain into message content: Plain escaped, At <at id="…"/>, AtAll <at type="all"/>, Image
// <img src="…"/> (a base64 image as a data: URL), Voice <audio src/>, File <file src title/>,
// Quote <quote id/>; Source is left out. Attribute values are escaped.
std::string EncodeContent(const domain::MessageChain& chain);

}  // namespace sb::platforms::satori
