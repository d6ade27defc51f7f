/** Light and dark: the system's choice unless the reader picked one; the pick is kept per browser. */
type ThemeChoice = "system" | "light" | "dark";

const KEY = "sessionkit-viewer.theme";
const ORDER: ThemeChoice[] = ["system", "light", "dark"];
const LABELS: Record<ThemeChoice, string> = { system: "◐ Auto", light: "☀ Light", dark: "☾ Dark" };

function saved(): ThemeChoice {
  try {
    const value = localStorage.getItem(KEY);
    return value === "light" || value === "dark" ? value : "system";
  } catch {
    return "system"; // storage refused (file:// in some browsers)
  }
}

function applyTheme(choice: ThemeChoice = saved()): ThemeChoice {
  if (choice === "system") delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = choice;
  return choice;
}

/** A button cycling Auto → Light → Dark, remembered. */
export function themeButton(): HTMLButtonElement {
  const button = document.createElement("button");
  button.type = "button";
  button.id = "theme";
  button.className = "header-btn";
  let choice = applyTheme();
  const show = () => {
    button.textContent = LABELS[choice];
    button.title = `Theme: ${choice} (click to change)`;
  };
  show();
  button.addEventListener("click", () => {
    choice = ORDER[(ORDER.indexOf(choice) + 1) % ORDER.length]!;
    try {
      localStorage.setItem(KEY, choice);
    } catch {
      // not remembered, still applied
    }
    applyTheme(choice);
    show();
  });
  return button;
}
