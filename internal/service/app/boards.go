package app

import (
	_ "embed"
	"fmt"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/platform/boardsfile"
	"github.com/rankstream/rankstream/internal/service/loadgen"
	"github.com/rankstream/rankstream/topics"
)

//go:embed demo-boards.yaml
var demoBoardsFile []byte

// DemoBoards are the boards of `rankstream dev` without --boards (demo-boards.yaml).
func DemoBoards() []*board.Board {
	bs, err := boardsfile.Parse("demo-boards.yaml", demoBoardsFile)
	if err != nil {
		panic("BUG: the embedded demo boards file: " + err.Error())
	}
	return bs
}

// LoadBoards reads the boards file of --boards; "" declares none. Its error names the file,
// line, column and field at fault.
func LoadBoards(path string) ([]*board.Board, error) {
	if path == "" {
		return nil, nil
	}
	bs, err := boardsfile.Load(path)
	if err != nil {
		return nil, fmt.Errorf("--boards: %w", err)
	}
	return bs, nil
}

// demoScoreLoads are the ops the demo traffic sends to the demo boards.
var demoScoreLoads = []loadgen.ScoreBoardLoad{{Board: "arena", Op: topics.OpIncr}, {Board: "highscore", Op: topics.OpSet}}
