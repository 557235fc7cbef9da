// Placeholder until this page group is built (issue 15).
export default function SystemPage() {
  return <p>SystemPage is not built yet.</p>;
}
