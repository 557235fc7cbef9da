// Icons for the adapters and requesters of the catalogues, drawn here rather than shipped: a
// rounded square in a colour of the entry's own (from its name) with the initials of its English
// label. LangBot's console asks for one per adapter and requester (`.../{name}/icon`); our own
// artwork keeps the binary free of other projects' logos.
//   Response r = MonogramResponse(entry);   // image/svg+xml, cacheable, no script
#pragma once

#include <string>
#include <string_view>

#include "domain/catalogue.hpp"
#include "http/request.hpp"

namespace sb::http::api {

// Up to two initials: the first letter or digit of the label's first two words ("OneBot v11" ->
// "OV", "Telegram" -> "TE"); the entry's name when the label has none.
std::string MonogramText(std::string_view label, std::string_view name);

// The SVG document for `name` with `label`'s initials; every character escaped for XML.
std::string MonogramSvg(std::string_view label, std::string_view name);

// 200 with the SVG of `entry`, served like a static image (long cache, nosniff, and a content
// security policy that forbids script should anyone open it directly).
Response MonogramResponse(const domain::CatalogueEntry& entry);

}  // namespace sb::http::api
