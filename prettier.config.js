// Prettier: the formatter (`npm run format` writes, `npm run lint` checks). Chosen to match the
// style the code was written in: double quotes, semicolons, trailing commas, long lines. 160
// columns gave the smallest reformat of the existing code among sensible widths (see
// docs/contributing.md "Code quality").
/** @type {import("prettier").Config} */
export default {
  printWidth: 160,
  singleQuote: false,
  semi: true,
  trailingComma: "all",
  arrowParens: "always",
};
