// Placeholder until this page group is built (issue 15).
export default function DashboardPage() {
  return <p>DashboardPage is not built yet.</p>;
}
