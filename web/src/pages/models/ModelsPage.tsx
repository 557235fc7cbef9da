// Placeholder until this page group is built (issue 15).
export default function ModelsPage() {
  return <p>ModelsPage is not built yet.</p>;
}
