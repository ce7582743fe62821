// go-random: a Euchre bot in Go that plays a uniformly random legal action.
//
// It does what every bot does (docs/protocol.md): dial the referee, open one
// RefereeService.Connect stream (one stream = one seat), send a Hello, answer every
// decision_request with a decision_reply carrying the same request_id and one of the
// legal_actions, and stop when the referee ends the stream or says shutdown.
//
// Configuration (the referee sets the environment variables when it starts the bot):
//
//	EUCHRE_REFEREE_ADDRESS  or -address HOST:PORT  where to dial (required)
//	EUCHRE_BOT_TOKEN        or -token TOKEN        the seat token for Hello.token
//	EUCHRE_BOT_NAME         or -name NAME          the name in Hello.bot_name
//	EUCHRE_BOT_SEED                                a seed, for reproducible play
//
// Exit status: 0 when the referee ends the stream, 2 when it refuses the handshake or the
// command line is wrong, 1 when the connection fails.
//
// Build it with the commands in docs/bots-in-other-languages.md: the package
// euchrebot/euchrev1 is generated from proto/euchre/v1/euchre.proto and referee.proto.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"os"
	"strconv"
	"time"

	pb "euchrebot/euchrev1"

	"google.golang.org/grpc"
)

const protocolVersion = 1

func env(name, fallback string) string {
	if value, ok := os.LookupEnv(name); ok {
		return value
	}
	return fallback
}

func main() {
	address := flag.String("address", env("EUCHRE_REFEREE_ADDRESS", ""), "the referee, HOST:PORT")
	token := flag.String("token", env("EUCHRE_BOT_TOKEN", ""), "the seat token")
	name := flag.String("name", env("EUCHRE_BOT_NAME", "go-random"), "the bot's name")
	flag.Parse()
	if *address == "" {
		fmt.Fprintln(os.Stderr, "go-random: no referee address (-address or EUCHRE_REFEREE_ADDRESS)")
		os.Exit(2)
	}
	seed := time.Now().UnixNano()
	if text := os.Getenv("EUCHRE_BOT_SEED"); text != "" {
		if parsed, err := strconv.ParseInt(text, 10, 64); err == nil {
			seed = parsed
		}
	}
	os.Exit(play(*address, *token, *name, rand.New(rand.NewSource(seed))))
}

// play holds one connection until the referee ends it; it returns the exit status.
func play(address, token, name string, random *rand.Rand) int {
	conn, err := grpc.Dial(address, grpc.WithInsecure(), grpc.WithBlock(),
		grpc.WithTimeout(30*time.Second))
	if err != nil {
		fmt.Fprintf(os.Stderr, "go-random: cannot reach the referee at %s: %v\n", address, err)
		return 1
	}
	defer conn.Close()
	stream, err := pb.NewRefereeServiceClient(conn).Connect(context.Background())
	if err != nil {
		fmt.Fprintf(os.Stderr, "go-random: cannot open a stream: %v\n", err)
		return 1
	}
	hello := &pb.Hello{ProtocolVersion: protocolVersion, BotName: name, BotVersion: "1.0.0",
		Token: token}
	if err := stream.Send(&pb.ConnectRequest{Payload: &pb.ConnectRequest_Hello{Hello: hello}}); err != nil {
		fmt.Fprintf(os.Stderr, "go-random: cannot say hello: %v\n", err)
		return 1
	}
	for {
		msg, err := stream.Recv()
		if err == io.EOF {
			return 0 // the referee closed the stream
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "go-random: the stream failed: %v\n", err)
			return 1
		}
		switch payload := msg.Payload.(type) {
		case *pb.ConnectResponse_Refusal:
			fmt.Fprintf(os.Stderr, "go-random: refused: %v: %s\n", payload.Refusal.Reason,
				payload.Refusal.Detail)
			return 2
		case *pb.ConnectResponse_DecisionRequest:
			request := payload.DecisionRequest
			legal := request.LegalActions
			reply := &pb.DecisionReply{RequestId: request.RequestId,
				Action: legal[random.Intn(len(legal))]}
			err := stream.Send(&pb.ConnectRequest{
				Payload: &pb.ConnectRequest_DecisionReply{DecisionReply: reply}})
			if err != nil {
				fmt.Fprintf(os.Stderr, "go-random: cannot reply: %v\n", err)
				return 1
			}
		case *pb.ConnectResponse_Fault:
			fmt.Fprintf(os.Stderr, "go-random: fault: %v: %s\n", payload.Fault.Kind,
				payload.Fault.Detail)
		case *pb.ConnectResponse_Shutdown:
			stream.CloseSend()
			return 0
		}
		// welcome, game_start, hand_start, game_event, game_over: not needed to play.
	}
}
