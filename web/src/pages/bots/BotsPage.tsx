// Placeholder until this page group is built (issue 15).
export default function BotsPage() {
  return <p>BotsPage is not built yet.</p>;
}
