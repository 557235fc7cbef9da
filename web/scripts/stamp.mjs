// Written last by `npm run build`: CMake re-embeds dist/ into the binary when this file changes.
import { writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
writeFileSync(new URL("../dist/.build-stamp", import.meta.url), `${Date.now()} ${randomBytes(8).toString("hex")}\n`);
