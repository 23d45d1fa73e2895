import LoupeCommands

LoupeCLI.main()
