// Writes libs.json: the exact versions of the page's libraries (from the npm install of this
// folder, pinned by package.json and package-lock.json) and the subresource-integrity hash of
// each file the page loads. Run `npm ci && npm run sri` after changing a version; the crate
// trnbake-tiles embeds libs.json, and tests/tiles.rs checks it against node_modules.
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";

const files = {
  "maplibre-gl": ["dist/maplibre-gl.js", "dist/maplibre-gl.css"],
  pmtiles: ["dist/pmtiles.js"],
};
const packages = {};
for (const [name, list] of Object.entries(files)) {
  const dir = new URL(`node_modules/${name}/`, import.meta.url);
  const version = JSON.parse(readFileSync(new URL("package.json", dir))).version;
  const hashes = {};
  for (const f of list) {
    hashes[f] = "sha384-" + createHash("sha384").update(readFileSync(new URL(f, dir))).digest("base64");
  }
  packages[name] = { version, files: hashes };
}
writeFileSync(new URL("libs.json", import.meta.url), JSON.stringify({ packages }, null, 2) + "\n");
