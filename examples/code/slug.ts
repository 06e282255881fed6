// Turns a title into a URL slug. Sample code for examples/code-review.yaml.
export function slug(title: string): string {
  return title
    .toLowerCase()
    .trim()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}
