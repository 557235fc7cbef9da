// Text placed inside HTML or XML (element content and quoted attribute values): the five
// characters with a meaning there become character references, everything else stays as it is.
//   html += "<title>" + util::EscapeMarkup(user_title) + "</title>";
#pragma once

#include <string>
#include <string_view>

namespace sb::util {

// & < > " ' -> &amp; &lt; &gt; &quot; &#39; (valid in HTML and in XML alike).
std::string EscapeMarkup(std::string_view text);

}  // namespace sb::util
