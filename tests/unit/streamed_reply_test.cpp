// The runtime's pacing of a streamed reply, on simulated time: updates one at a time, at most one
// per interval with the newest text, and exactly one end after the last update returned.
#include "runtime/streamed_reply.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "util/simulated_clock.hpp"

namespace sb::runtime {
namespace {

using namespace std::chrono_literals;

// Records what the runtime asks of the stream; update answers are held until the test gives them.
class RecordingStream final : public platforms::ReplyStream {
 public:
  void Update(std::string text, std::function<void(util::Result<void>)> done) override {
    updates.push_back(std::move(text));
    pending.push_back(std::move(done));
  }
  void Finish(domain::OutgoingMessage message,
              std::function<void(util::Result<domain::SendReceipt>)> done) override {
    finished.push_back(message.chain.empty() ? "" : message.chain[0].text);
    done(domain::SendReceipt{});
  }
  void Abandon() override { ++abandoned; }

  void Answer(util::Result<void> r = util::Ok()) {
    auto done = std::move(pending.front());
    pending.erase(pending.begin());
    done(std::move(r));
  }

  std::vector<std::string> updates;
  std::vector<std::function<void(util::Result<void>)>> pending;
  std::vector<std::string> finished;
  int abandoned = 0;
};

domain::OutgoingMessage Final(std::string text) {
  domain::MessageElement e;
  e.type = domain::ElementType::kPlain;
  e.text = std::move(text);
  return {domain::TargetType::kPerson, "u", {e}};
}

struct Fixture {
  util::SimulatedClock clock;
  std::shared_ptr<RecordingStream> stream = std::make_shared<RecordingStream>();
  std::vector<std::string> warnings;
  std::shared_ptr<StreamedReply> reply = std::make_shared<StreamedReply>(
      stream, clock, 500ms, [this](std::string w) { warnings.push_back(std::move(w)); });
};

TEST(StreamedReply, FirstPieceAtOnceThenAtMostOneUpdatePerIntervalWithTheNewestText) {
  Fixture f;
  EXPECT_FALSE(f.reply->Started());
  f.reply->Add("a");
  EXPECT_TRUE(f.reply->Started());
  ASSERT_EQ(f.stream->updates, std::vector<std::string>{"a"});
  f.reply->Add("b");  // while the first update is in flight: held
  f.stream->Answer();
  f.reply->Add("c");  // too soon: waits for the interval
  EXPECT_EQ(f.stream->updates.size(), 1u);
  f.clock.Advance(499ms);
  EXPECT_EQ(f.stream->updates.size(), 1u);
  f.clock.Advance(1ms);
  ASSERT_EQ(f.stream->updates, (std::vector<std::string>{"a", "abc"}));
  f.stream->Answer();
  f.clock.Advance(10s);  // nothing new: no update
  EXPECT_EQ(f.stream->updates.size(), 2u);
}

TEST(StreamedReply, FinishWaitsForTheUpdateInFlightAndEndsOnce) {
  Fixture f;
  f.reply->Add("a");
  f.reply->Add("b");
  int done = 0;
  f.reply->Finish(Final("ab!"), [&](util::Result<domain::SendReceipt> r) { done += r ? 1 : 0; });
  EXPECT_TRUE(f.stream->finished.empty());  // the first update has not returned yet
  f.stream->Answer();
  EXPECT_EQ(f.stream->finished, std::vector<std::string>{"ab!"});
  EXPECT_EQ(done, 1);
  f.reply->Add("late");
  f.clock.Advance(1s);
  EXPECT_EQ(f.stream->updates.size(), 1u);
  f.reply->Abandon();  // already ended: nothing
  EXPECT_EQ(f.stream->abandoned, 0);
}

TEST(StreamedReply, AFailedUpdateStopsTheUpdatesButTheReplyStillFinishes) {
  Fixture f;
  f.reply->Add("a");
  f.stream->Answer(util::Fail(util::ErrorCode::kUpstreamFailed, "refused"));
  ASSERT_EQ(f.warnings.size(), 1u);
  EXPECT_NE(f.warnings[0].find("refused"), std::string::npos);
  f.clock.Advance(1s);
  f.reply->Add("b");
  f.clock.Advance(1s);
  EXPECT_EQ(f.stream->updates.size(), 1u);
  f.reply->Finish(Final("ab"), [](util::Result<domain::SendReceipt>) {});
  EXPECT_EQ(f.stream->finished.size(), 1u);
}

TEST(StreamedReply, AbandonCancelsThePendingUpdate) {
  Fixture f;
  f.reply->Add("a");
  f.stream->Answer();
  f.reply->Add("b");  // scheduled for the end of the interval
  f.reply->Abandon();
  EXPECT_EQ(f.stream->abandoned, 1);
  f.clock.Advance(1s);
  EXPECT_EQ(f.stream->updates.size(), 1u);
}

}  // namespace
}  // namespace sb::runtime
