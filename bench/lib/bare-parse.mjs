// The floor of the whole-process open: read the file, split it into lines and JSON.parse every
// line, keeping the records, then print how many there were. Plain JavaScript run by plain `node`.
import { readFileSync } from "node:fs";

const records = [];
for (const line of readFileSync(process.argv[2], "utf8").split("\n")) if (line) records.push(JSON.parse(line));
process.stdout.write(`${records.length}\n`);
