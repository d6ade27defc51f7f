// The page as the README shows it: no options, the bundler (or the copied files) supplies the assets.
import { runChecks } from "./checks.js";

await runChecks();
