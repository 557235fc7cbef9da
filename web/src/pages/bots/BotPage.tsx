// Placeholder until this page group is built (issue 15).
export default function BotPage() {
  return <p>BotPage is not built yet.</p>;
}
