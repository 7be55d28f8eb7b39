from memroute.cli import main

main()
