# Writes OUT, a C++ source defining sb::embedded::SYMBOL as the text of IN.
file(READ "${IN}" content)
file(WRITE "${OUT}" "// Generated from ${IN}; do not edit.\n#include <string_view>\nnamespace sb::embedded {\nextern const std::string_view ${SYMBOL};\nconst std::string_view ${SYMBOL} = R\"sb_embed(${content})sb_embed\";\n}  // namespace sb::embedded\n")
