// Placeholder until this page group is built (issue 15).
export default function DebugChatPage() {
  return <p>DebugChatPage is not built yet.</p>;
}
