// cpp-random: a Euchre bot in C++ that plays a uniformly random legal action.
//
// The C++ counterpart of sample_bots/node/random_bot.js. The message classes and the
// RefereeService stub are generated from proto/euchre/v1 when the bot is built (see
// CMakeLists.txt). Like every bot, it does four things:
//
//   1. dial the referee and open ONE RefereeService.Connect stream (one stream = one seat);
//   2. send a Hello (protocol version, name, version, the seat token);
//   3. answer every decision_request with a decision_reply carrying the same
//      request_id and one of the legal_actions, copied as received;
//   4. stop when the referee ends the stream or says shutdown, except when the shutdown
//      says `restarting` (a standing ladder): then reconnect, as after a lost connection.
//
// Unlike the Node.js bot it asks for bundles (Capabilities.bundles): the referee then
// groups a seat's messages into one Bundle per decision, which this bot unpacks and
// handles one by one.
//
// Configuration (the referee sets the environment variables when it starts the bot):
//   EUCHRE_REFEREE_ADDRESS  or --address HOST:PORT   where to dial (required);
//                                                    unix:PATH dials a Unix socket
//   EUCHRE_BOT_TOKEN        or --token TOKEN         the seat token for Hello.token
//   EUCHRE_BOT_NAME         or --name NAME           the name in Hello.bot_name
//   EUCHRE_TLS_CA           or --tls-ca FILE         dial with TLS, trusting this CA
//                                                    certificate (PEM); unset: plaintext
//   EUCHRE_GIVE_UP_AFTER    or --give-up-after S     keep reconnecting for S seconds (30)
//   EUCHRE_BOT_SEED                                  a seed, for reproducible play
//
// Exit status: 0 when the referee ends the stream, 2 when it refuses the handshake (except
// SHUTTING_DOWN, which is retried), or the command line is wrong, or the CA file cannot be
// read; 1 when it cannot be reached for about 30 seconds; 130 / 143 on SIGINT / SIGTERM
// (the call is cancelled first).

#include <grpcpp/grpcpp.h>

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>

#include "euchre/v1/referee.grpc.pb.h"

namespace {

namespace ev1 = euchre::v1;

constexpr std::uint32_t kProtocolVersion = 1;
constexpr const char* kBotVersion = "1.0.0";
constexpr int kGiveUpAfterMs = 30000;  // default: how long to keep retrying an unreachable referee

struct Options {
  std::string address;
  std::string token;
  std::string name = "cpp-random";
  std::string tls_ca;  // the CA certificate file; empty: plaintext
  std::string give_up_after;  // seconds of retrying an unreachable referee; empty: default
  int give_up_ms = kGiveUpAfterMs;
  std::shared_ptr<grpc::ChannelCredentials> credentials;
};

using Stream = grpc::ClientReaderWriter<ev1::ConnectRequest, ev1::ConnectResponse>;

// How one connection ended.
enum class Ended {
  kNormal,      // the referee closed the stream, or sent shutdown: exit 0
  kRefused,     // the handshake was refused: retrying will not help, exit 2
  kFailed,      // the connection failed, or the referee refused as it shuts down: retry
  kRestarting,  // the referee stops and will start again (Shutdown.restarting): retry
  kSignalled,   // SIGINT or SIGTERM: exit 128 + its number
};

struct SessionResult {
  Ended how;
  std::string detail;
  bool welcomed;  // the handshake had succeeded (a later drop gets a fresh retry budget)
};

// SIGINT and SIGTERM, received on a thread of their own (a handler could do nothing but set
// a flag): the first one cancels the current call and wakes the backoff, so that the bot
// stops at once and quietly, with exit status 128 + the signal's number.
class Stopper {
 public:
  // Blocks both signals in this thread and in every thread started after it (gRPC's
  // included), then waits for them on its own thread. Call before any gRPC call.
  void Start() {
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    std::thread([this, signals] {
      int received = 0;
      if (sigwait(&signals, &received) != 0) return;
      std::lock_guard<std::mutex> lock(mutex_);
      signal_ = received;
      if (call_ != nullptr) call_->TryCancel();
      woken_.notify_all();
    }).detach();
  }

  // The signal received, 0 while none.
  int signal() {
    std::lock_guard<std::mutex> lock(mutex_);
    return signal_;
  }

  // The call a signal cancels (nullptr: none); cancelled at once if a signal came already.
  void Watch(grpc::ClientContext* call) {
    std::lock_guard<std::mutex> lock(mutex_);
    call_ = call;
    if (call_ != nullptr && signal_ != 0) call_->TryCancel();
  }

  // Sleeps for `ms`; returns false, early, if a signal comes.
  bool Sleep(int ms) {
    std::unique_lock<std::mutex> lock(mutex_);
    return !woken_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return signal_ != 0; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable woken_;
  int signal_ = 0;
  grpc::ClientContext* call_ = nullptr;
};

// The decision itself: any legal action, uniformly at random. A real bot would look at
// request.observation() (its hand, the trump, the tricks so far, the scores...) and
// request.kind(); the observation is complete, so no memory of earlier events is needed.
const ev1::Action& Choose(const ev1::DecisionRequest& request, std::mt19937_64& random) {
  std::uniform_int_distribution<int> pick(0, request.legal_actions_size() - 1);
  return request.legal_actions(pick(random));
}

// gRPC status codes with which the referee refuses a handshake (it also sends a
// Refusal message first); retrying would not help.
bool IsRefusal(grpc::StatusCode code) {
  return code == grpc::StatusCode::UNAUTHENTICATED ||
         code == grpc::StatusCode::FAILED_PRECONDITION ||
         code == grpc::StatusCode::ALREADY_EXISTS || code == grpc::StatusCode::INVALID_ARGUMENT;
}

// The state of one connection while it reads messages.
class Session {
 public:
  Session(Stream& stream, std::mt19937_64& random) : stream_(stream), random_(random) {}

  // Handles one message (a Bundle's messages one by one, as if each had come alone).
  void Handle(const ev1::ConnectResponse& msg) {
    switch (msg.payload_case()) {
      case ev1::ConnectResponse::kBundle:
        for (const ev1::ConnectResponse& inner : msg.bundle().messages()) Handle(inner);
        break;
      case ev1::ConnectResponse::kWelcome:
        welcomed_ = true;
        break;
      case ev1::ConnectResponse::kRefusal:  // the referee closes the stream right after this
        refusal_ = ev1::RefusalReason_Name(msg.refusal().reason()) + ": " +
                   msg.refusal().detail();
        shutting_down_ = msg.refusal().reason() == ev1::REFUSAL_REASON_SHUTTING_DOWN;
        break;
      case ev1::ConnectResponse::kDecisionRequest: {
        const ev1::DecisionRequest& request = msg.decision_request();
        if (request.legal_actions_size() == 0) {  // never sent by a correct referee
          std::cerr << "decision request " << request.request_id() << " has no legal action\n";
          break;
        }
        ev1::ConnectRequest reply;
        reply.mutable_decision_reply()->set_request_id(request.request_id());
        *reply.mutable_decision_reply()->mutable_action() = Choose(request, random_);
        stream_.Write(reply);  // a failed write shows up as the end of the stream
        break;
      }
      case ev1::ConnectResponse::kFault:  // our reply was not accepted (should never happen)
        std::cerr << "fault: " << ev1::FaultKind_Name(msg.fault().kind()) << ": "
                  << msg.fault().detail() << "\n";
        break;
      case ev1::ConnectResponse::kShutdown:
        shutdown_ = msg.shutdown().reason();
        restarting_ = msg.shutdown().restarting();
        break;
      default:
        // game_start, hand_start, game_event, game_over: this bot needs none of them.
        break;
    }
  }

  bool welcomed() const { return welcomed_; }
  const std::optional<std::string>& refusal() const { return refusal_; }
  bool shutting_down() const { return shutting_down_; }  // the refusal says SHUTTING_DOWN
  const std::optional<std::string>& shutdown() const { return shutdown_; }  // its reason
  bool restarting() const { return restarting_; }  // the shutdown says it will start again

 private:
  Stream& stream_;
  std::mt19937_64& random_;
  bool welcomed_ = false;
  std::optional<std::string> refusal_;
  bool shutting_down_ = false;
  std::optional<std::string> shutdown_;
  bool restarting_ = false;
};

// Registers a call with the Stopper for as long as it lives.
class Watched {
 public:
  Watched(Stopper& stopper, grpc::ClientContext& call) : stopper_(stopper) {
    stopper_.Watch(&call);
  }
  ~Watched() { stopper_.Watch(nullptr); }
  Watched(const Watched&) = delete;
  Watched& operator=(const Watched&) = delete;

 private:
  Stopper& stopper_;
};

// One connection: handshake, then play until the stream ends.
SessionResult PlaySession(const Options& options, std::mt19937_64& random, Stopper& stopper) {
  auto channel = grpc::CreateChannel(options.address, options.credentials);
  auto stub = ev1::RefereeService::NewStub(channel);
  grpc::ClientContext context;
  Watched watched(stopper, context);
  std::unique_ptr<Stream> stream = stub->Connect(&context);

  // The handshake: the first message on the stream, and only the first.
  ev1::ConnectRequest first;
  ev1::Hello* hello = first.mutable_hello();
  hello->set_protocol_version(kProtocolVersion);
  hello->set_bot_name(options.name);
  hello->set_bot_version(kBotVersion);
  hello->set_token(options.token);
  // Empty forms and decks mean every form and every deck.
  hello->mutable_capabilities()->set_bundles(true);
  stream->Write(first);

  Session session(*stream, random);
  ev1::ConnectResponse msg;
  while (stream->Read(&msg)) {
    session.Handle(msg);
    if (session.shutdown()) {
      // Nothing more will be asked: end our side and stop waiting for the referee's.
      stream->WritesDone();
      context.TryCancel();
      stream->Finish();
      if (session.restarting()) {
        return {Ended::kRestarting, "the referee is restarting: " + *session.shutdown(),
                session.welcomed()};
      }
      return {Ended::kNormal, "shutdown: " + *session.shutdown(), session.welcomed()};
    }
  }
  grpc::Status status = stream->Finish();
  if (stopper.signal() != 0) return {Ended::kSignalled, "", session.welcomed()};
  if (session.refusal()) {  // a referee on its way down may be back soon: retry then
    return {session.shutting_down() ? Ended::kFailed : Ended::kRefused, *session.refusal(),
            session.welcomed()};
  }
  if (status.ok()) return {Ended::kNormal, "the referee closed the stream", session.welcomed()};
  if (IsRefusal(status.error_code())) {
    return {Ended::kRefused, status.error_message(), session.welcomed()};
  }
  return {Ended::kFailed, status.error_message(), session.welcomed()};
}

// Connect, and reconnect with backoff while the referee is unreachable, restarting, or
// refusing because it is shutting down. A welcomed session starts a fresh budget.
int Run(const Options& options, std::mt19937_64& random, Stopper& stopper) {
  int delay_ms = 100;
  int waited_ms = 0;
  for (;;) {
    SessionResult result = PlaySession(options, random, stopper);
    switch (result.how) {
      case Ended::kNormal:
        return 0;
      case Ended::kRefused:
        std::cerr << options.name << ": refused: " << result.detail << "\n";
        return 2;
      case Ended::kSignalled:
        return 128 + stopper.signal();
      case Ended::kRestarting:
        std::cerr << options.name << ": " << result.detail << "; reconnecting\n";
        break;
      case Ended::kFailed:
        break;
    }
    if (result.welcomed) {  // the connection worked, then dropped: a fresh retry budget
      delay_ms = 100;
      waited_ms = 0;
    }
    if (waited_ms >= options.give_up_ms) {
      std::cerr << options.name << ": connection failed: " << result.detail;
      if (options.tls_ca.empty()) {
        std::cerr << " (if the referee serves TLS, pass --tls-ca or set EUCHRE_TLS_CA)";
      }
      std::cerr << "\n";
      return 1;
    }
    if (!stopper.Sleep(delay_ms)) return 128 + stopper.signal();
    waited_ms += delay_ms;
    delay_ms = std::min(delay_ms * 2, 2000);
  }
}

std::string FromEnv(const char* variable, const std::string& fallback) {
  const char* value = std::getenv(variable);
  return value != nullptr && *value != '\0' ? value : fallback;
}

// Reads the environment, then the flags (flags override). Returns false on a bad flag.
bool ParseOptions(int argc, char** argv, Options& options) {
  options.address = FromEnv("EUCHRE_REFEREE_ADDRESS", "");
  options.token = FromEnv("EUCHRE_BOT_TOKEN", "");
  options.name = FromEnv("EUCHRE_BOT_NAME", options.name);
  options.tls_ca = FromEnv("EUCHRE_TLS_CA", "");
  options.give_up_after = FromEnv("EUCHRE_GIVE_UP_AFTER", "");
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    std::string* target = flag == "--address"  ? &options.address
                          : flag == "--token"  ? &options.token
                          : flag == "--name"   ? &options.name
                          : flag == "--tls-ca" ? &options.tls_ca
                          : flag == "--give-up-after" ? &options.give_up_after
                                               : nullptr;
    if (target == nullptr) {
      std::cerr << "unknown argument: " << flag << "\n";
      return false;
    }
    if (i + 1 >= argc) {
      std::cerr << flag << " needs a value\n";
      return false;
    }
    *target = argv[++i];
  }
  if (!options.give_up_after.empty()) {
    char* end = nullptr;
    double seconds = std::strtod(options.give_up_after.c_str(), &end);
    if (end == options.give_up_after.c_str() || *end != '\0' || !(seconds > 0)) {
      std::cerr << "--give-up-after (or EUCHRE_GIVE_UP_AFTER) takes a number of seconds "
                   "above 0; got " << options.give_up_after << "\n";
      return false;
    }
    options.give_up_ms = static_cast<int>(std::min(seconds * 1000.0, 2.0e9));
  }
  return true;
}

// The channel credentials: TLS trusting the CA certificate in options.tls_ca (PEM), or
// plaintext when there is none. Returns false, having said why, when the file cannot be
// read or holds no PEM certificate.
bool LoadCredentials(Options& options) {
  if (options.tls_ca.empty()) {
    options.credentials = grpc::InsecureChannelCredentials();
    return true;
  }
  const char* problem = "cannot read the CA file (--tls-ca or EUCHRE_TLS_CA): ";
  grpc::SslCredentialsOptions ssl;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(options.tls_ca.c_str(), "rb"),
                                                       &std::fclose);
  if (file != nullptr) {
    char chunk[4096];
    std::size_t got;
    while ((got = std::fread(chunk, 1, sizeof chunk, file.get())) > 0) {
      ssl.pem_root_certs.append(chunk, got);
    }
  }
  if (file == nullptr || std::ferror(file.get()) != 0) {  // e.g. missing, or a directory
    std::cerr << problem << options.tls_ca << ": " << std::strerror(errno) << "\n";
    return false;
  }
  if (ssl.pem_root_certs.find("-----BEGIN ") == std::string::npos ||
      ssl.pem_root_certs.find("CERTIFICATE") == std::string::npos) {
    std::cerr << problem << options.tls_ca << " holds no PEM certificate\n";
    return false;
  }
  options.credentials = grpc::SslCredentials(ssl);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  // First, before anything can start a gRPC thread. Never destroyed: its thread may
  // outlive main.
  static Stopper& stopper = *new Stopper;
  stopper.Start();
  Options options;
  if (!ParseOptions(argc, argv, options)) {
    std::cerr << "usage: random_bot [--address HOST:PORT|unix:PATH] [--token TOKEN] [--name NAME] "
                 "[--tls-ca FILE] [--give-up-after SECONDS]\n";
    return 2;
  }
  if (options.address.empty()) {
    std::cerr << "no referee address: pass --address or set EUCHRE_REFEREE_ADDRESS\n";
    return 2;
  }
  if (!LoadCredentials(options)) return 2;
  std::string seed = FromEnv("EUCHRE_BOT_SEED", "");
  std::mt19937_64 random(seed.empty() ? std::random_device{}()
                                      : std::strtoull(seed.c_str(), nullptr, 10));
  return Run(options, random, stopper);
}
